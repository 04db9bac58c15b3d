import ChronicleLog

// MARK: - The log of fixtures/v1-old-state

/// What `fixtures/v1-old-state` records: an expense-approval app's log written by the app's first
/// version, whose `State` (``OldStateFixture/StateV1``, state schema version 1) later gained a field.
/// The log was compacted at its last snapshot before a few more entries were appended, so only
/// that snapshot, in the old state's encoding, holds what the removed entries did. The generator
/// (`tools/fixtures`) writes it from this plan; the engine's tests open a copy with a newer `State`.
public enum OldStateFixture {
  /// The meta `app` value.
  public static let appID = "chronicle-expenses"
  /// The fixed log identifier written into meta `log-id` (a real log gets a random one).
  public static let logID: [UInt8] = (0..<16).map { UInt8(0xD0 + $0) }
  /// The entries the log held before compaction.
  public static let firstPart: ClosedRange<UInt64> = 1...50
  /// The entries appended after compaction.
  public static let secondPart: ClosedRange<UInt64> = 51...60
  /// The snapshot compaction cuts at: the anchor, and the only snapshot left.
  public static let cut: UInt64 = 50
  /// Where snapshots are written (state schema version 1), with their codec.
  public static let snapshots: [UInt64: PayloadCodec] = [25: .json, 50: .cbor]
  /// The first entry's timestamp: 2026-04-01T00:00:00Z in µs since 1970.
  public static let firstTimestamp: Int64 = 1_775_001_600_000_000
  /// The time between two entries: 60 s.
  public static let timestampStep: Int64 = 60_000_000
  /// Who submits, approves and rejects, in turn.
  public static let users = ["alice", "bob", "chen"]

  /// The app's action, the same in every version of the app.
  public enum Action: Codable, Sendable, Equatable {
    case submit(id: Int, cents: Int, by: String)
    case approve(id: Int)
    case reject(id: Int, reason: String)

    /// The entry's type name: the case name.
    public var typeName: String {
      switch self {
      case .submit: "submit"
      case .approve: "approve"
      case .reject: "reject"
      }
    }
  }

  /// An expense waiting for a decision.
  public struct Expense: Codable, Sendable, Equatable {
    /// The expense's identifier.
    public var id: Int
    /// The amount in cents.
    public var cents: Int
    /// Who submitted it.
    public var submitter: String

    /// An expense.
    public init(id: Int, cents: Int, submitter: String) {
      self.id = id
      self.cents = cents
      self.submitter = submitter
    }
  }

  /// The state as the app's first version encoded it (state schema version 1).
  public struct StateV1: Codable, Sendable, Equatable {
    /// Expenses submitted and not yet decided, oldest first.
    public var pending: [Expense] = []
    /// The sum of the approved expenses, in cents.
    public var approvedCents = 0
    /// How many expenses were approved.
    public var approvedCount = 0
    /// How many expenses were rejected.
    public var rejectedCount = 0

    /// The state before the first entry.
    public init() {}

    /// The first version's reducer.
    public mutating func apply(_ action: Action) {
      switch action {
      case .submit(let id, let cents, let user):
        pending.append(Expense(id: id, cents: cents, submitter: user))
      case .approve(let id):
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return }
        approvedCents += pending.remove(at: index).cents
        approvedCount += 1
      case .reject(let id, _):
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return }
        pending.remove(at: index)
        rejectedCount += 1
      }
    }
  }

  /// What entry `seq` records: a submission on every seq ≢ 2 (mod 3), a decision on the expense
  /// submitted just before otherwise (a rejection every fourth decision).
  public static func action(_ seq: UInt64) -> Action {
    let i = Int(seq)
    guard i % 3 == 2 else { return .submit(id: i, cents: 1_000 + i * 137, by: users[i % 3]) }
    if i % 12 == 11 { return .reject(id: i - 1, reason: "no receipt for #\(i - 1)") }
    return .approve(id: i - 1)
  }

  /// The entry of `seq`: CBOR, state schema 1, metadata naming who acted.
  public static func newEntry(_ seq: UInt64) throws -> NewEntry {
    let action = action(seq)
    return try NewEntry(
      encoding: action, typeName: action.typeName, metadata: ["user": users[Int(seq) % 3]], codec: .cbor,
      schemaVersion: 1, timestamp: firstTimestamp + Int64(seq - 1) * timestampStep)
  }

  /// The state after entry `seq`, folded with the first version's reducer.
  public static func state(after seq: UInt64) -> StateV1 {
    var state = StateV1()
    for next in stride(from: 1, through: seq, by: 1) { state.apply(action(next)) }
    return state
  }
}
