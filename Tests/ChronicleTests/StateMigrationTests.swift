import Chronicle
import ChronicleTestTools
import Foundation
import Testing

/// The second version of the expense app of `fixtures/v1-old-state`: its `State` gained
/// `auditNotes`, so snapshots of the first version (state schema 1) no longer decode as it.
private struct Expenses: Reducer {
  /// The same actions as the first version (the fixture's `OldStateFixture.Action`).
  enum Action: Codable, Sendable, Equatable {
    case submit(id: Int, cents: Int, by: String)
    case approve(id: Int)
    case reject(id: Int, reason: String)
  }

  struct Expense: Codable, Sendable, Equatable {
    var id: Int
    var cents: Int
    var submitter: String
  }

  /// State schema version 2.
  struct State: Codable, Sendable, Equatable {
    var pending: [Expense] = []
    var approvedCents = 0
    var approvedCount = 0
    var rejectedCount = 0
    var auditNotes: [String] = []
  }

  /// The first version's state, kept to read its snapshots.
  struct StateV1: Decodable, Sendable {
    var pending: [Expense]
    var approvedCents: Int
    var approvedCount: Int
    var rejectedCount: Int
  }

  static let migration = StateMigration(fromVersion: 1, decoding: StateV1.self) { old in
    State(
      pending: old.pending, approvedCents: old.approvedCents, approvedCount: old.approvedCount,
      rejectedCount: old.rejectedCount, auditNotes: ["migrated from state schema 1"])
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .submit(let id, let cents, let user):
      state.pending.append(Expense(id: id, cents: cents, submitter: user))
    case .approve(let id):
      guard let index = state.pending.firstIndex(where: { $0.id == id }) else { break }
      state.approvedCents += state.pending.remove(at: index).cents
      state.approvedCount += 1
      state.auditNotes.append("approved #\(id)")
    case .reject(let id, let reason):
      guard let index = state.pending.firstIndex(where: { $0.id == id }) else { break }
      state.pending.remove(at: index)
      state.rejectedCount += 1
      state.auditNotes.append("rejected #\(id): \(reason)")
    }
    return .none
  }
}

/// A compacted log written by an older `State` opens after the app's update through a
/// ``StateMigration``: `fixtures/v1-old-state` holds entries 51…60 and one snapshot, at 50, of the
/// first version's state.
@Suite struct StateMigrationTests {
  static let fixture = "v1-old-state"
  /// The first version's state after entry 50 (the snapshot), as the fixture's generator folded it.
  static let pendingAt50 = Array(stride(from: 3, through: 48, by: 3))
  static let options: StoreOptions = {
    var options = StoreOptions(stateSchemaVersion: 2, appID: "chronicle-expenses")
    options.stateMigrations = [Expenses.migration]
    return options
  }()

  /// Opened with the newer `State` and a migration, the log gives the snapshot's state converted,
  /// then the entries after it folded by the new reducer.
  @Test func compactedLogOpensWithANewerState() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let copy = try Fixtures.copy(Self.fixture, into: temporary)
    let store = try Store(initialState: Expenses.State(), reducer: Expenses(), log: .directory(copy), options: Self.options)
    #expect(store.recovery.snapshotSeq == 50)
    #expect(store.recovery.entriesReplayed == 10)
    #expect(store.recovery.warnings.isEmpty, "\(store.recovery.warnings)")
    let atCut = try store.state(at: 50)
    #expect(atCut.pending.map(\.id) == Self.pendingAt50)
    #expect(atCut.auditNotes == ["migrated from state schema 1"])
    #expect(atCut.approvedCount + atCut.rejectedCount + atCut.pending.count == 33)
    let state = store.state
    #expect(state.auditNotes.first == "migrated from state schema 1")
    #expect(state.auditNotes.count == 1 + 3, "entries 53, 56 and 59 decide")
    #expect(state.approvedCount + state.rejectedCount == atCut.approvedCount + atCut.rejectedCount + 3)
    #expect(state.pending.map(\.id) == Self.pendingAt50 + [51, 54, 57, 60])

    // The new version goes on: sends, undo to the migrated state, a snapshot of schema 2 at close.
    try store.send(.approve(id: 60))
    #expect(store.state.auditNotes.last == "approved #60")
    try store.restore(to: 50)
    #expect(store.state == atCut)
    try store.close()

    let reopened = try Store(
      initialState: Expenses.State(), reducer: Expenses(), log: .directory(copy), options: Self.options)
    #expect(reopened.state == atCut)
    #expect(reopened.recovery.snapshotSeq == 62)
    #expect(try reopened.state(at: 50) == atCut)
    try reopened.close()
  }

  /// Without a migration, the log refuses to open and says what to do; nothing is written.
  @Test func withoutAMigrationTheErrorSaysWhatToDo() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let copy = try Fixtures.copy(Self.fixture, into: temporary)
    let before = try Data(contentsOf: copy.appendingPathComponent("data.mdb"))
    for options in [
      StoreOptions(stateSchemaVersion: 2, appID: "chronicle-expenses"),
      // The same version number, but a State that changed: the snapshot does not decode.
      StoreOptions(appID: "chronicle-expenses"),
    ] {
      do {
        _ = try Store(initialState: Expenses.State(), reducer: Expenses(), log: .directory(copy), options: options)
        Issue.record("the log opened without a migration")
      } catch {
        let message = "\(error)"
        #expect(message.contains("compacted at entry 50"), "\(message)")
        #expect(message.contains("StateMigration"), "\(message)")
      }
    }
    #expect(try Data(contentsOf: copy.appendingPathComponent("data.mdb")) == before)
  }

  /// The committed fixture was written by the first version: its only snapshot has state schema 1
  /// and lacks the new field.
  @Test func fixtureHoldsTheOldState() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let copy = try Fixtures.copy(Self.fixture, into: temporary)
    let log = try ActionLog(directory: copy, access: .readOnly)
    defer { try? log.close() }
    #expect(try log.meta().anchor.seq == 50)
    #expect(try log.snapshots().map(\.seq) == [50])
    let snapshot = try #require(try log.snapshot(at: 50))
    #expect(snapshot.schemaVersion == 1)
    let old = try snapshot.codec.decode(Expenses.StateV1.self, from: snapshot.state)
    #expect(old.pending.map(\.id) == Self.pendingAt50)
    #expect(throws: (any Error).self) { try snapshot.codec.decode(Expenses.State.self, from: snapshot.state) }
  }
}
