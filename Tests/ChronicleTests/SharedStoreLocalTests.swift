@testable import Chronicle
import ChronicleLog
import ChronicleTestSupport
import ChronicleTestTools
import Foundation
import Testing

/// What a shared store does on the device alone, before any server: offline sends are applied,
/// durable and pending; refused sends leave nothing; a directory of another stream is refused.
/// The syncing itself is tested against PostgreSQL (ChroniclePostgresTests).
@Suite struct SharedStoreLocalTests {
  let stream = SharedStream("ledger")

  func open(_ directory: TemporaryDirectory, device: String = "tablet") throws -> SharedStore<Ledger.State, Ledger.Action> {
    try SharedStore(
      initialState: Ledger.State(), reducer: Ledger(), directory: directory.child("device"), stream: stream,
      device: device, validators: [Ledger.noOverdraft])
  }

  @Test func offlineSendsAreAppliedDurableAndPendingAcrossAReopen() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    do {
      let store = try open(directory)
      #expect(try store.send(.deposit("cash", cents: 500)) == 1)
      #expect(try store.send(.withdraw("cash", cents: 200), metadata: ["by": "ana"]) == 2)
      #expect(store.state.balances == ["cash": 300])
      #expect(store.confirmedState.balances == [:])
      #expect(store.head == .genesis)
      try store.close()
    }
    let store = try open(directory)
    defer { try? store.close() }
    #expect(store.state.balances == ["cash": 300])
    #expect(store.pending.map(\.seq) == [1, 2])
    #expect(store.pending.map(\.action) == [.deposit("cash", cents: 500), .withdraw("cash", cents: 200)])
    #expect(store.pending.allSatisfy { $0.refusedBecause == nil })
    // The outbox records who sent what, durable before send returned.
    let outbox = try ActionLog(
      directory: directory.child("device/\(SharedStreamLayout.pendingDirectory)"), access: .readOnly)
    defer { try? outbox.close() }
    let second = try #require(try outbox.record(at: 2))
    #expect(second.metadata == ["by": "ana", "chronicle.device": "tablet", "chronicle.pending": "2"])
    #expect(second.typeName == "withdraw")
  }

  @Test func aRefusedSendKeepsNothing() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try open(directory)
    defer { try? store.close() }
    try store.send(.deposit("cash", cents: 100))
    #expect {
      try store.send(.withdraw("cash", cents: 101))
    } throws: { error in
      guard case ChronicleError.rejected(let reason) = error else { return false }
      return reason == "no account may go below zero"
    }
    #expect(store.pending.count == 1)
    #expect(store.state.balances == ["cash": 100])
    #expect(try store.send(.withdraw("cash", cents: 100)) == 2)
  }

  @Test func theCopyIsNamedByTheStreamAndAnotherStreamsDirectoryIsRefused() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    do {
      let store = try open(directory)
      #expect(try store.mirror.origin() == stream.origin)
      try store.close()
    }
    #expect {
      try SharedStore(
        initialState: Ledger.State(), reducer: Ledger(), directory: directory.child("device"),
        stream: SharedStream("other"), device: "tablet")
    } throws: { "\($0)".contains("belongs to app 'ledger', not 'other'") }
    #expect(throws: ChronicleError.self) {
      try SharedStore(
        initialState: Ledger.State(), reducer: Ledger(), directory: directory.child("x"), stream: stream, device: "")
    }
  }

  @Test @MainActor func subscribersHearEachChangeOnTheMainActorInOrder() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try open(directory)
    defer { try? store.close() }
    let heard = Recorder<Int>()
    let token = store.subscribe { new, old in
      MainActor.assertIsolated()
      heard.append((new.balances["cash"] ?? 0) - (old.balances["cash"] ?? 0))
    }
    defer { token.cancel() }
    try store.send(.deposit("cash", cents: 5))
    try store.send(.deposit("cash", cents: 7))
    try store.send(.withdraw("cash", cents: 2))
    for _ in 0..<200 where heard.values.count < 3 { try await Task.sleep(for: .milliseconds(10)) }
    #expect(heard.values == [5, 7, -2])
    #expect(try store.state(at: 0) == Ledger.State())
    #expect {
      try store.state(at: 1)
    } throws: { error in
      guard case ChronicleError.noSuchEntry(1) = error else { return false }
      return true
    }
  }

  @Test func undoAndRedoTakeBackAndPutBackTheDevicesOwnActions() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try open(directory)
    defer { try? store.close() }
    #expect(!store.canUndo)
    try store.send(.deposit("cash", cents: 5))
    try store.send(.deposit("cash", cents: 7))
    try store.undo(metadata: ["why": "typo"])
    #expect(store.state.balances == ["cash": 5])
    #expect(store.canRedo)
    try store.redo()
    #expect(store.state.balances == ["cash": 12])
    #expect(!store.canRedo)
    try store.undo()
    try store.undo()
    #expect(store.state.balances == [:])
    #expect {
      try store.undo()
    } throws: { error in
      guard case ChronicleError.nothingToUndo = error else { return false }
      return true
    }
    try store.redo()
    #expect(store.state.balances == ["cash": 5])
    // A new action ends what can be redone.
    try store.send(.deposit("cash", cents: 1))
    #expect(!store.canRedo)
    #expect {
      try store.redo()
    } throws: { error in
      guard case ChronicleError.nothingToRedo = error else { return false }
      return true
    }
    // The undos and redos are pending entries of the outbox, like the actions; they survive a reopen.
    #expect(store.pending.count == 8)
    #expect(store.pending.filter { $0.action == nil }.count == 5)
    try store.close()
    let reopened = try open(directory)
    defer { try? reopened.close() }
    #expect(reopened.state.balances == ["cash": 6])
    #expect(reopened.canUndo)
  }

  /// A continuous sync cancelled between two rounds ends: its wait for the next send does not miss
  /// a cancellation that came before it started waiting.
  @Test func aWaitForTheNextSendThatStartsCancelledEnds() async {
    let bell = Doorbell()
    for _ in 0..<100 {
      let waiting = Task { await bell.wait() }
      waiting.cancel()
      await waiting.value
    }
    // A ring that came first is kept for the next wait.
    bell.ring()
    await bell.wait()
  }
}
