import Chronicle
import ChronicleTestSupport
import ChronicleTesting
import Foundation
import ChronicleTestTools
import Testing

/// Tests that pass: the ways a test store is meant to be used.
@Suite struct TestStoreTests {
  @Test func counter() async throws {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    let seq = await store.send(.increment) { $0.count = 1 }
    #expect(seq == 1)
    await store.send(.increment) { $0.count = 2 }
    await store.send(.decrement) { $0.count = 1 }
    await store.send(.set(10)) { $0.count = 10 }
    await store.send(.noop)
    await store.finish()
    store.assertReplayMatches()
    #expect(store.state.count == 10)
    #expect(try store.store.history.count == 5)
  }

  @Test func fetchWithAnEffect() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    await store.send(.fetch) { $0.isLoading = true }
    await store.receive(.loaded(42)) {
      $0.isLoading = false
      $0.count = 42
    }
    await store.finish()
    store.assertReplayMatches()
    let history = try? store.store.history
    #expect(history?.map(\.isFromEffect) == [false, true])
  }

  @Test func effectActionsAreReceivedInOrder() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    await store.send(.incrementTwice)
    #expect(store.unreceivedActions == [.increment, .increment])
    await store.receive(.increment) { $0.count = 1 }
    await store.receive(.increment) { $0.count = 2 }
    #expect(store.unreceivedActions.isEmpty)
    await store.finish()
  }

  @Test func receiveByPredicate() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    await store.send(.fetch) { $0.isLoading = true }
    await store.receive(where: { if case .loaded = $0 { true } else { false } }) {
      $0.isLoading = false
      $0.count = 42
    }
    await store.finish()
  }

  @Test func cancelledEffectsLeaveNothingToFinish() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    await store.send(.startTimer)
    #expect(store.store.runningEffects == 1)
    await store.send(.stopTimer)
    await store.finish()
  }

  @Test func middlewareTracksEventsAndSendsActions() async {
    let events = Recorder<String>()
    let store = TestStore(
      initialState: Shop.State(), reducer: Shop(), middleware: [Shop.analytics(events), Shop.printer])
    await store.send(.purchase("tea")) { $0.basket = ["tea"] }
    await store.receive(.receiptPrinted) { $0.receipts = 1 }
    await store.send(.browse)
    await store.send(.purchase("cake")) { $0.basket = ["tea", "cake"] }
    await store.receive(.receiptPrinted) { $0.receipts = 2 }
    await store.finish()
    #expect(events.values == ["purchase tea, basket of 1", "purchase cake, basket of 2"])
    store.assertReplayMatches()
  }

  @Test func expectedRejections() async {
    let store = TestStore(initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft])
    await store.send(.deposit("jenny", cents: 1_000)) { $0.balances["jenny"] = 1_000 }
    await store.send(.withdraw("donald", cents: 1), rejectedWith: "no account may go below zero")
    await store.send(.transfer(from: "jenny", to: "donald", cents: 2_000), rejectedWith: "no account may go below zero")
    await store.send(.transfer(from: "jenny", to: "donald", cents: 400)) {
      $0.balances = ["jenny": 600, "donald": 400]
    }
    #expect(store.store.lastSeq == 2)
    await store.finish()
    store.assertReplayMatches()
  }

  @Test func nonExhaustiveMode() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    store.exhaustivity = .off
    // Only the asserted field is compared: isLoading is not mentioned.
    await store.send(.set(5)) { $0.count = 5 }
    await store.send(.fetch)
    // Effect actions may be left unreceived, and skipped by a later receive.
    await store.send(.incrementTwice)
    await store.receive(.loaded(42)) { $0.count = 42 }
    #expect(store.state == Counter.State(count: 42, isLoading: false))
    // An effect still running at finish() is no failure either.
    await store.send(.startTimer)
    await store.finish(timeout: .milliseconds(10))
  }

  @Test func waitForEffectsThenCheckTheState() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    store.exhaustivity = .off
    await store.send(.fetch)
    #expect(store.state.isLoading)
    await store.waitForEffects()
    #expect(store.state == Counter.State(count: 42, isLoading: false))
    #expect(store.unreceivedActions == [.loaded(42)])
  }

  @Test func timeTravelReplaysToo() async throws {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    await store.send(.set(1)) { $0.count = 1 }
    await store.send(.set(2)) { $0.count = 2 }
    await store.send(.set(3)) { $0.count = 3 }
    try store.store.undo()
    try store.store.undo()
    try store.store.redo()
    try store.store.restore(to: 1)
    await store.send(.increment) { $0.count = 2 }
    #expect(store.store.lastSeq == 8)
    store.assertReplayMatches()
    await store.finish()
  }

  @Test func longLogsWithJumpsReplay() async throws {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    for value in 1...600 {
      await store.send(.set(value)) { $0.count = value }
    }
    try store.store.restore(to: 300)  // past the fresh fold's first kept timeline (256)
    try store.store.restore(to: 3)
    try store.store.undo()
    #expect(store.state.count == 300)
    await store.send(.increment) { $0.count = 301 }
    store.assertReplayMatches()
    await store.finish()
  }

  @Test func aRealDirectoryLog() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let options = StoreOptions(durability: .full, snapshotEvery: 2)
    do {
      let store = try TestStore(
        initialState: Ledger.State(), reducer: Ledger(), log: .directory(directory.url), options: options,
        validators: [Ledger.noOverdraft])
      await store.send(.deposit("jenny", cents: 500)) { $0.balances["jenny"] = 500 }
      await store.send(.transfer(from: "jenny", to: "donald", cents: 200)) {
        $0.balances = ["jenny": 300, "donald": 200]
      }
      await store.send(.withdraw("donald", cents: 300), rejectedWith: "no account may go below zero")
      await store.send(.withdraw("donald", cents: 50)) { $0.balances["donald"] = 150 }
      await store.finish()
      store.assertReplayMatches()
      #expect(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("data.mdb").path))
    }
    // Released: the log is closed and can be opened again, from its snapshot.
    let reopened = try TestStore(
      initialState: Ledger.State(), reducer: Ledger(), log: .directory(directory.url), options: options,
      validators: [Ledger.noOverdraft])
    #expect(reopened.state.balances == ["jenny": 300, "donald": 150])
    #expect(reopened.store.recovery.snapshotSeq == 3, "\(reopened.store.recovery)")
    await reopened.send(.deposit("donald", cents: 1)) { $0.balances["donald"] = 151 }
    reopened.assertReplayMatches()
    #expect(try reopened.store.history.map(\.seq) == [1, 2, 3, 4])
    await reopened.finish()
  }

  @Test func aSecondWriterIsRefused() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let first = try TestStore(initialState: Counter.State(), reducer: Counter(), log: .directory(directory.url))
    #expect(throws: ChronicleError.self) {
      _ = try TestStore(initialState: Counter.State(), reducer: Counter(), log: .directory(directory.url))
    }
    await first.finish()
  }

  @Test func effectErrorsGoToTheTestsOwnHandler() async throws {
    let errors = Recorder<String>()
    let store = try TestStore(
      initialState: Counter.State(), reducer: Counter(), log: .inMemory,
      options: StoreOptions(onEffectError: { errors.append("\($0)") }))
    await store.send(.failingEffect)
    await store.finish()
    #expect(errors.values == ["the network is down"])
  }

  @Test func defaultTimeoutCanBeChanged() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    #expect(store.timeout == .seconds(1))
    store.timeout = .seconds(5)
    #expect(store.timeout == .seconds(5))
    #expect(store.exhaustivity == .on)
  }
}
