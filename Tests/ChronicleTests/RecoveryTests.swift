import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@Suite struct RecoveryTests {
  @Test func aSnapshotOfAnotherStateSchemaIsSkippedForAFullReplay() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let v1 = StoreOptions(snapshotEvery: 10)
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: v1)
    for _ in 0..<25 { try store.send(.increment) }
    try store.close()
    var v2 = v1
    v2.stateSchemaVersion = 2
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: v2)
    #expect(reopened.state.count == 25)
    #expect(reopened.recovery.snapshotSeq == nil)
    #expect(reopened.recovery.entriesReplayed == 25)
    #expect(reopened.recovery.warnings.count == 3)
    #expect(reopened.recovery.warnings.first?.contains("state schema 1") == true)
    try reopened.close()
  }

  @Test func aSnapshotThatNoLongerDecodesFallsBackToAnOlderOne() throws {
    struct OldState: Codable, Sendable { var count = 0; var isLoading = false }
    struct Renamed: Codable, Sendable, Equatable { var total = 0 }  // the state type changed shape
    struct RenamedCounter: Reducer {
      typealias State = Renamed
      typealias Action = Counter.Action
      func reduce(into state: inout Renamed, action: Counter.Action) -> Effect<Counter.Action> {
        if action == .increment { state.total += 1 }
        return .none
      }
    }
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let options = StoreOptions(snapshotEvery: 10)
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    for _ in 0..<25 { try store.send(.increment) }
    try store.close()
    let reopened = try Store(initialState: Renamed(), reducer: RenamedCounter(), log: .directory(dir.url), options: options)
    #expect(reopened.state == Renamed(total: 25))
    #expect(reopened.recovery.snapshotSeq == nil)
    #expect(reopened.recovery.warnings.allSatisfy { $0.contains("does not decode") })
    try reopened.close()
  }

  @Test func aDamagedSnapshotIsSkipped() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let options = StoreOptions(snapshotEvery: 10)
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    for _ in 0..<25 { try store.send(.increment) }
    try store.close()  // snapshots at 10, 20, 25
    let env = try Environment(path: dir.url.path, configuration: .init(maxDatabases: 4))
    let snapshots = try env.openDatabase(named: "snapshots")
    let key25 = withUnsafeBytes(of: UInt64(25).bigEndian) { Array($0) }
    try env.write { txn in
      var value = try #require(try txn.get(forKey: key25, in: snapshots))
      value[70] ^= 0xFF
      try txn.put(value, forKey: key25, in: snapshots)
    }
    env.close()
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
    #expect(reopened.state.count == 25)
    #expect(reopened.recovery.snapshotSeq == 20)
    #expect(reopened.recovery.entriesReplayed == 5)
    #expect(reopened.recovery.warnings.count == 1)
    try reopened.close()
  }

  @Test func anUndecodableEntryStopsTheOpenAndWritesNothing() throws {
    enum Fewer: Codable, Sendable { case increment }
    struct FewerReducer: Reducer {
      typealias State = Int
      func reduce(into state: inout Int, action: Fewer) -> Effect<Fewer> { state += 1; return .none }
    }
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    try store.send(.increment)
    try store.send(.set(4))
    try store.send(.increment)
    try store.close()
    let before = try Data(contentsOf: dir.url.appendingPathComponent("data.mdb"))
    #expect {
      _ = try Store(initialState: 0, reducer: FewerReducer(), log: .directory(dir.url))
    } throws: { error in
      guard case ChronicleError.undecodableEntry(let seq, let type, _) = error else { return false }
      return seq == 2 && type == "set"
    }
    #expect(try Data(contentsOf: dir.url.appendingPathComponent("data.mdb")) == before)
    // The right type still opens it.
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    #expect(reopened.state.count == 5)
    try reopened.close()
  }

  @Test func migrationsOpenALogWrittenWithOlderActions() throws {
    // Version 1 of the app.
    struct V1: Reducer {
      struct State: Codable, Sendable, Equatable { var balance = 0; var memos: [String] = [] }
      enum Action: Codable, Sendable { case add(Int), clear, legacyBonus }
      func reduce(into state: inout State, action: Action) -> Effect<Action> {
        switch action {
        case .add(let amount): state.balance += amount
        case .clear: state.balance = 0
        case .legacyBonus: state.balance += 100
        }
        return .none
      }
    }
    // Version 2: `add` renamed to `deposit` with a new field, `legacyBonus` removed (mapped to a deposit).
    struct V2: Reducer {
      typealias State = V1.State
      enum Action: Codable, Sendable, Equatable { case deposit(amount: Int, memo: String?), clear }
      func reduce(into state: inout State, action: Action) -> Effect<Action> {
        switch action {
        case .deposit(let amount, let memo):
          state.balance += amount
          if let memo { state.memos.append(memo) }
        case .clear: state.balance = 0
        }
        return .none
      }
    }
    for codec in PayloadCodec.allCases {
      let dir = try TemporaryDirectory()
      defer { dir.remove() }
      let v1 = try Store(
        initialState: V1.State(), reducer: V1(), log: .directory(dir.url),
        options: StoreOptions(snapshotEvery: 0, codec: codec, schemaVersion: 1, stateSchemaVersion: 1))
      try v1.send(.add(5))
      try v1.send(.legacyBonus)
      try v1.send(.clear)
      try v1.send(.add(7))
      try v1.close()

      let migration = Migration(fromVersion: 1, decoding: V1.Action.self) { old -> V2.Action in
        switch old {
        case .add(let amount): .deposit(amount: amount, memo: nil)
        case .clear: .clear
        case .legacyBonus: .deposit(amount: 100, memo: "legacy bonus")
        }
      }
      let options = StoreOptions(
        snapshotEvery: 0, codec: codec, schemaVersion: 2, stateSchemaVersion: 2, migrations: [migration])
      let v2 = try Store(initialState: V1.State(), reducer: V2(), log: .directory(dir.url), options: options)
      #expect(v2.state == V1.State(balance: 7, memos: ["legacy bonus"]))
      #expect(v2.recovery.entriesReplayed == 4)
      try v2.send(.deposit(amount: 1, memo: "new"))
      #expect(try v2.history.map(\.action) == [
        .deposit(amount: 5, memo: nil), .deposit(amount: 100, memo: "legacy bonus"), .clear,
        .deposit(amount: 7, memo: nil), .deposit(amount: 1, memo: "new"),
      ])
      try v2.close()
      // Without the migration (and no usable snapshot), the old entries do not decode: a clear error, not a silent skip.
      #expect(throws: ChronicleError.self) {
        _ = try Store(
          initialState: V1.State(), reducer: V2(), log: .directory(dir.url),
          options: StoreOptions(snapshotEvery: 0, codec: codec, schemaVersion: 2, stateSchemaVersion: 3))
      }
    }
  }

  @Test func replayFromScratchEqualsTheLiveState() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(
      initialState: Ledger.State(), reducer: Ledger(), log: .directory(dir.url),
      options: StoreOptions(snapshotEvery: 0), validators: [Ledger.noOverdraft])
    var generator = SystemRandomNumberGenerator()
    let accounts = ["a", "b", "c", "d"]
    for _ in 0..<500 {
      let action: Ledger.Action =
        Bool.random(using: &generator)
        ? .deposit(accounts.randomElement()!, cents: Int.random(in: 1...100))
        : .transfer(from: accounts.randomElement()!, to: accounts.randomElement()!, cents: Int.random(in: 1...150))
      _ = try? store.send(action)
    }
    let live = store.state
    try store.close()
    let replayed = try Store(
      initialState: Ledger.State(), reducer: Ledger(), log: .directory(dir.url),
      options: StoreOptions(snapshotEvery: 0, stateSchemaVersion: 99))  // no snapshot can be used
    #expect(replayed.recovery.snapshotSeq == nil)
    #expect(replayed.state == live)
    try replayed.close()
  }
}
