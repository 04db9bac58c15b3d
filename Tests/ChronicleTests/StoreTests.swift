import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
import Testing

@Suite struct StoreTests {
  @Test func sendReducesCommitsAndReturnsTheSequenceNumber() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    #expect(try store.send(.increment) == 1)
    #expect(try store.send(.increment) == 2)
    #expect(try store.send(.set(10), metadata: ["user": "alice"]) == 3)
    #expect(store.state.count == 10)
    #expect(store.lastSeq == 3)
    let history = try store.history
    #expect(history.map(\.seq) == [1, 2, 3])
    #expect(history.map(\.typeName) == ["increment", "increment", "set"])
    #expect(history.map(\.action) == [.increment, .increment, .set(10)])
    #expect(history[2].metadata == ["user": "alice"])
    #expect(history.allSatisfy { $0.kind == .action && !$0.isFromEffect })
    try store.close()
    #expect(throws: ChronicleError.self) { try store.send(.increment) }
  }

  @Test func aRejectedActionChangesNothingAndSaysWhy() throws {
    let store = try Store(
      initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft])
    try store.send(.deposit("jenny", cents: 500))
    let seen = Recorder<Ledger.State>()
    let token = store.subscribe { new, _ in seen.append(new) }
    #expect {
      try store.send(.transfer(from: "jenny", to: "donald", cents: 800))
    } throws: { error in
      guard case ChronicleError.rejected(let reason) = error else { return false }
      return reason == "no account may go below zero"
    }
    #expect(store.state.balances == ["jenny": 500])
    #expect(store.lastSeq == 1)
    #expect(seen.values.isEmpty)
    #expect(try store.send(.transfer(from: "jenny", to: "donald", cents: 200)) == 2)
    #expect(store.state.balances == ["jenny": 300, "donald": 200])
    #expect(seen.values.count == 1)
    token.cancel()
  }

  @Test func aBatchIsAllOrNone() throws {
    let store = try Store(initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft])
    #expect(try store.send(contentsOf: [.deposit("a", cents: 100), .deposit("b", cents: 50)]) == 1...2)
    // The second transfer overdraws: nothing of the batch is kept.
    #expect(throws: ChronicleError.self) {
      try store.send(contentsOf: [.transfer(from: "a", to: "b", cents: 100), .transfer(from: "a", to: "b", cents: 1)])
    }
    #expect(store.state.balances == ["a": 100, "b": 50])
    #expect(store.lastSeq == 2)
    #expect(try store.send(.deposit("a", cents: 1)) == 3)
  }

  @Test func reopeningRecoversTheStateFromSnapshotAndTail() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let options = StoreOptions(snapshotEvery: 100)
    do {
      // Dropped without close(), as an app that just stops: entries are committed, no final snapshot.
      let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
      for _ in 0..<250 { try store.send(.increment) }
      try store.send(.decrement)
    }
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    #expect(reopened.state.count == 249)
    #expect(reopened.recovery.snapshotSeq == 200)
    #expect(reopened.recovery.entriesReplayed == 51)
    #expect(reopened.recovery.warnings.isEmpty)
    try reopened.close()
  }

  @Test func closeThenReopenUsesTheCloseSnapshot() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let options = StoreOptions(snapshotEvery: 100)
    let first = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    for _ in 0..<250 { try first.send(.increment) }
    try first.close()
    let second = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    #expect(second.state.count == 250)
    #expect(second.recovery.snapshotSeq == 250)
    #expect(second.recovery.entriesReplayed == 0)
    #expect(second.recovery.lastSeq == 250)
    #expect(try second.send(.increment) == 251)
    try second.close()
  }

  @Test func aSecondWriterGetsLogLocked() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    #expect {
      _ = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    } throws: { error in
      guard case ChronicleError.logLocked(let path) = error else { return false }
      return path == dir.url.standardizedFileURL.path
    }
    try store.close()
  }

  @Test func concurrentSendersLoseNothing() async throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    let seqs = try await withThrowingTaskGroup(of: [UInt64].self) { group in
      for _ in 0..<8 {
        group.addTask { try (0..<250).map { _ in try store.send(.increment) } }
      }
      return try await group.reduce(into: [UInt64]()) { $0 += $1 }
    }
    #expect(seqs.sorted() == Array(1...2000))
    #expect(store.state.count == 2000)
    #expect(try store.history.count == 2000)
    try store.close()
  }

  @Test func inMemoryStoresBehaveTheSameAndVanish() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .inMemory)
    try store.send(.set(3))
    let path = store.logPath
    #expect(FileManager.default.fileExists(atPath: path))
    try store.close()
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func bothCodecsAndDurabilitiesRoundTrip() throws {
    for codec in PayloadCodec.allCases {
      for durability in [Durability.full, .normal] {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let options = StoreOptions(durability: durability, snapshotEvery: 3, codec: codec)
        let store = try Store(initialState: Ledger.State(), reducer: Ledger(), log: .directory(dir.url), options: options)
        try store.send(.deposit("ä", cents: 7))
        try store.send(.transfer(from: "ä", to: "b", cents: 2))
        try store.send(.open("c"))
        try store.send(.deposit("c", cents: 1))
        try store.close()
        let reopened = try Store(initialState: Ledger.State(), reducer: Ledger(), log: .directory(dir.url), options: options)
        #expect(reopened.state.balances == ["ä": 5, "b": 2, "c": 1])
        #expect(try reopened.history.map(\.action) == [
          .deposit("ä", cents: 7), .transfer(from: "ä", to: "b", cents: 2), .open("c"), .deposit("c", cents: 1),
        ])
        try reopened.close()
      }
    }
  }
}
