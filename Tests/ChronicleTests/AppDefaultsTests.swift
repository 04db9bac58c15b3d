import Chronicle
import ChronicleTestSupport
import ChronicleTestTools
import Foundation
import Testing

/// What a store does for an app that set nothing: the app identifier of a new log, metadata set
/// once for every entry, and how many snapshots it keeps.
@Suite struct AppDefaultsTests {
  // MARK: - App identifier

  /// A new directory log opened without `appID` records its directory's name, and says so.
  @Test func newLogWithoutAppIDRecordsItsDirectoryName() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let url = temporary.child("expenses.log")
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(url))
    try store.send(.increment)
    #expect(store.recovery.warnings.count == 1)
    #expect(store.recovery.warnings.first?.contains("\"expenses\"") == true)
    #expect(store.recovery.warnings.first?.contains("StoreOptions(appID:)") == true)
    try store.close()

    let log = try ActionLog(directory: url, access: .readOnly)
    #expect(try log.meta().appID == "expenses")
    #expect(try log.origin().hasPrefix("chronicle/expenses/"))
    try log.close()

    // Reopened without an appID: no new warning, the recorded identifier stays.
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(url))
    #expect(reopened.recovery.warnings.isEmpty)
    #expect(reopened.state.count == 1)
    try reopened.close()
    // Another app's identifier is refused.
    #expect(throws: ChronicleError.self) {
      try Store(
        initialState: Counter.State(), reducer: Counter(), log: .directory(url), options: StoreOptions(appID: "ledger"))
    }
  }

  /// An app identifier given in the options is recorded as it is, with no warning.
  @Test func givenAppIDIsRecorded() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let url = temporary.child("data")
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(url), options: StoreOptions(appID: "ledger"))
    #expect(store.recovery.warnings.isEmpty)
    try store.close()
    let log = try ActionLog(directory: url, access: .readOnly)
    #expect(try log.meta().appID == "ledger")
    try log.close()
  }

  /// A log created with an empty identifier (by an earlier version) keeps opening, and keeps it empty.
  @Test func existingLogWithEmptyAppIDOpens() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let url = temporary.child("old.log")
    let log = try ActionLog(directory: url, access: .readWrite, options: .init(appID: ""))
    try log.append(try NewEntry(encoding: Counter.Action.increment, typeName: "increment", codec: .cbor))
    try log.close()

    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(url))
    #expect(store.state.count == 1)
    #expect(store.recovery.warnings.isEmpty)
    try store.send(.increment)
    try store.close()
    let reader = try ActionLog(directory: url, access: .readOnly)
    #expect(try reader.meta().appID == "")
    try reader.close()
  }

  /// An in-memory log stays without an identifier and without a warning.
  @Test func inMemoryLogHasNoAppID() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    #expect(store.recovery.warnings.isEmpty)
    try store.close()
  }

  // MARK: - Default metadata

  /// `defaultMetadata` goes with every entry: sends, batches, effects' actions and jumps; an
  /// entry's own metadata wins for a key in both.
  @Test func defaultMetadataGoesWithEveryEntry() async throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    #expect(store.defaultMetadata.isEmpty)
    try await store.send(.increment)
    store.defaultMetadata = ["user": "alice", "device": "ipad"]
    try await store.send(.increment, metadata: ["reason": "why not"])
    try await store.send(contentsOf: [.increment, .decrement])
    try await store.send(.increment, metadata: ["user": "bob"])
    try store.undo()
    try store.redo(metadata: ["user": "carol"])
    try store.restore(to: 1, metadata: ["reason": "start over"])
    try await store.send(.fetch)
    await store.waitForEffects()
    store.defaultMetadata = [:]
    try await store.send(.increment)

    let metadata = try store.history.map(\.metadata)
    let alice = ["user": "alice", "device": "ipad"]
    #expect(metadata.count == 11)
    #expect(metadata[0] == [:])
    #expect(metadata[1] == alice.merging(["reason": "why not"]) { $1 })
    #expect(metadata[2] == alice)
    #expect(metadata[3] == alice)
    #expect(metadata[4] == ["user": "bob", "device": "ipad"])
    #expect(metadata[5] == alice, "undo")
    #expect(metadata[6] == ["user": "carol", "device": "ipad"], "redo")
    #expect(metadata[7] == alice.merging(["reason": "start over"]) { $1 }, "restore")
    #expect(metadata[8] == alice, "fetch")
    #expect(metadata[9] == alice, "the effect's action")
    #expect(try store.history[9].isFromEffect)
    #expect(metadata[10] == [:])
    try store.close()
  }

  // MARK: - Snapshots kept

  /// The store keeps the newest `snapshotsKept` snapshots (1,000 by default); states older than
  /// all of them are still exact (folded from the initial state), and undo and restore reach them.
  @Test func snapshotsAreBounded() throws {
    #expect(StoreOptions().snapshotsKept == 1_000)
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let url = temporary.child("bounded")
    let options = StoreOptions(snapshotEvery: 10, snapshotsKept: 8, appID: "bounded")
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(url), options: options)
    for value in 1...200 { try store.send(.set(value * 3)) }
    let kept = try ActionLog(directory: url, access: .readOnly)
    let seqs = try kept.snapshots().map(\.seq)
    try kept.close()
    #expect(seqs == Array(stride(from: 130, through: 200, by: 10)))

    // Before the oldest snapshot: folded from the initial state.
    #expect(try store.state(at: 5).count == 15)
    #expect(try store.state(at: 125).count == 375)
    try store.restore(to: 7)
    #expect(store.state.count == 21)
    try store.undo()
    #expect(store.state.count == 600)
    try store.close()

    // A reopened store and a reader agree.
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(url), options: options)
    #expect(reopened.state.count == 600)
    #expect(try reopened.state(at: 7).count == 21)
    try reopened.close()
  }

  /// `snapshotsKept: nil` keeps every snapshot, as before.
  @Test func nilKeepsEverySnapshot() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let url = temporary.child("all")
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(url),
      options: StoreOptions(snapshotEvery: 10, snapshotsKept: nil, appID: "all"))
    for _ in 1...120 { try store.send(.increment) }
    try store.close()
    let log = try ActionLog(directory: url, access: .readOnly)
    #expect(try log.snapshots().count == 12)
    try log.close()
  }
}
