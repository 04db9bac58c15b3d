import ChronicleLog

// MARK: - The log of fixtures/v1-features

/// What `fixtures/v1-features` records: the counter app of `v1-counter` with every entry kind
/// (restore, undo, redo, marker), undo groups, snapshots whose auxiliary data holds undo and redo
/// stacks, a compaction (anchor 37), the Merkle tree and signed checkpoints. The generator
/// (`tools/fixtures`) writes it from this plan; the fixture tests fold it with ``FeaturesModel``.
public enum FeaturesFixture {
  /// The meta `app` value.
  public static let appID = "chronicle-features"
  /// The fixed log identifier written into meta `log-id` (a real log gets a random one).
  public static let logID: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }
  /// The entries the log held before compaction.
  public static let firstPart: ClosedRange<UInt64> = 1...60
  /// The entries appended after compaction.
  public static let secondPart: ClosedRange<UInt64> = 61...100
  /// The snapshot compaction cuts at: the anchor.
  public static let cut: UInt64 = 37
  /// Where snapshots are written, with their codec.
  public static let snapshots: [UInt64: PayloadCodec] = [20: .json, 37: .cbor, 60: .cbor, 100: .json]
  /// Tree sizes at which checkpoints are signed (as the log reaches them): three before compaction, two after.
  public static let checkpointSizes: [UInt64] = [20, 37, 50, 80, 100]
  /// The sizes whose checkpoint the second key signs too.
  public static let cosignedSizes: Set<UInt64> = [100]
  /// The first entry's timestamp: 2026-03-01T00:00:00Z in µs since 1970.
  public static let firstTimestamp: Int64 = 1_772_323_200_000_000

  /// The fixture's signing key: a **public test key**, never to be used for anything real.
  public static func signer() throws -> NoteSigner {
    try NoteSigner(name: "fixtures.chronicle.example/log", seed: (0..<32).map { UInt8($0 &* 7 &+ 3) })
  }

  /// A second public test key, which also signs the checkpoints of ``cosignedSizes``.
  public static func secondSigner() throws -> NoteSigner {
    try NoteSigner(name: "fixtures.chronicle.example/second", seed: (0..<32).map { UInt8(200 &- $0 &* 5) })
  }

  /// What entry `seq` records (the targets of undo and redo come from ``FeaturesModel``).
  public static func step(_ seq: UInt64) -> FeaturesStep {
    switch seq {
    case 4, 11, 12, 17, 18, 25, 36, 45, 46, 59, 65, 66, 76, 94, 100: return .undo
    case 5, 13, 26, 47, 67, 95: return .redo
    case 14: return .restore(3)
    case 30: return .restore(0)
    case 52: return .restore(41)
    case 75: return .restore(40)
    case 7, 16, 28, 37, 50, 60, 70, 85, 99:
      return .marker(FixtureMarker(label: "marker \(seq)", note: "état n° \(seq) ✓"))
    default:
      if seq % 5 == 0 { return .action(.set(Int(seq % 13) - 6)) }
      if seq % 3 == 0 { return .action(.decrement) }
      return .action(.increment)
    }
  }

  /// The flags of entry `seq`: effect responses that are not undoable, two undo groups, one
  /// reserved bit (kept and hashed, ignored by readers).
  public static func flags(_ seq: UInt64) -> EntryFlags {
    switch seq {
    case 9, 10, 56, 57, 82: return .continuesGroup
    case 93: return EntryFlags(rawValue: 0x40)
    default: return seq % 11 == 0 ? [.fromEffect, .notUndoable] : []
    }
  }

  /// JSON before compaction except every third entry; CBOR after except every fourth.
  public static func codec(_ seq: UInt64) -> PayloadCodec {
    seq <= 60 ? (seq % 3 == 0 ? .cbor : .json) : (seq % 4 == 0 ? .json : .cbor)
  }

  /// Audit metadata on some entries.
  public static func metadata(_ seq: UInt64) -> [String: String] {
    switch step(seq) {
    case .undo, .redo, .restore: return ["user": "ann", "reason": "time travel ⏪"]
    default: return seq % 6 == 1 ? ["user": "bob", "device": "desk #\(seq % 4)"] : [:]
    }
  }

  /// 2.5 s between entries; the entries after compaction a day later.
  public static func timestamp(_ seq: UInt64) -> Int64 {
    firstTimestamp + Int64(seq - 1) * 2_500_000 + (seq > firstPart.upperBound ? 86_400_000_000 : 0)
  }

  /// The entry at `seq`, whose jump target (for undo and redo) `model` supplies.
  public static func newEntry(_ seq: UInt64, target: UInt64?) throws -> NewEntry {
    let base = (flags: flags(seq), metadata: metadata(seq), codec: codec(seq), timestamp: timestamp(seq))
    switch step(seq) {
    case .action(let action):
      return try NewEntry(
        flags: base.flags, encoding: action, typeName: action.typeName, metadata: base.metadata, codec: base.codec,
        timestamp: base.timestamp)
    case .marker(let marker):
      return try NewEntry(
        kind: .marker, flags: base.flags, encoding: marker, typeName: "marker", metadata: base.metadata,
        codec: base.codec, timestamp: base.timestamp)
    case .restore, .undo, .redo:
      let kind: EntryKind =
        switch step(seq) {
        case .restore: .restore
        case .undo: .undo
        default: .redo
        }
      return try NewEntry(
        kind: kind, flags: base.flags, encoding: FixtureJumpTarget(target: target ?? 0), typeName: kind.description,
        metadata: base.metadata, codec: base.codec, timestamp: base.timestamp)
    }
  }
}

/// One entry of the features fixture.
public enum FeaturesStep: Equatable, Sendable {
  /// An action.
  case action(CounterAction)
  /// A marker.
  case marker(FixtureMarker)
  /// A restore to the state after the given entry (0: the initial state).
  case restore(UInt64)
  /// An undo of the newest undo step.
  case undo
  /// A redo of the newest undone step.
  case redo
}

/// The payload of restore, undo and redo entries: `{"target": seq}`.
public struct FixtureJumpTarget: Codable, Equatable, Sendable {
  /// The entry whose resulting state becomes current.
  public var target: UInt64

  /// A target.
  public init(target: UInt64) { self.target = target }
}

/// The auxiliary data of a snapshot as the engine writes it: `{"undo": [seq…], "redo": [seq…]}`, newest last.
public struct FixtureUndoStacks: Codable, Equatable, Sendable {
  /// The states undo returns to.
  public var undo: [UInt64]
  /// The states redo returns to.
  public var redo: [UInt64]

  /// Stacks.
  public init(undo: [UInt64], redo: [UInt64]) {
    self.undo = undo
    self.redo = redo
  }
}

// MARK: - The fold

/// The counter and its undo and redo stacks after each entry, with the engine's transitions
/// (docs/guide.md: a text editor's undo): an undoable action pushes the position before it and
/// clears redo, unless it continues a group; a restore pushes too; undo and redo move the
/// position before them to the other stack and jump to the step they pop.
public struct FeaturesModel: Sendable {
  /// The counter after each entry (0: the initial state).
  public private(set) var states: [UInt64: CounterState] = [0: CounterState()]
  /// The current stacks.
  public private(set) var stacks = FixtureUndoStacks(undo: [], redo: [])
  /// The position: the last entry applied.
  public private(set) var seq: UInt64 = 0

  /// An empty model.
  public init() {}

  /// The current counter.
  public var state: CounterState { states[seq] ?? CounterState() }

  /// The target entry `next` names (for a jump), or `nil`; fails when the stack it pops is empty.
  public func target(of next: UInt64) throws -> UInt64? {
    switch FeaturesFixture.step(next) {
    case .restore(let target): return target
    case .undo:
      guard let top = stacks.undo.last else { throw FixtureModelError(description: "entry \(next): nothing to undo") }
      return top
    case .redo:
      guard let top = stacks.redo.last else { throw FixtureModelError(description: "entry \(next): nothing to redo") }
      return top
    case .action, .marker: return nil
    }
  }

  /// Applies entry `next` (which must follow ``seq``).
  public mutating func apply(_ next: UInt64) throws {
    let target = try target(of: next)
    let flags = FeaturesFixture.flags(next)
    var state = self.state
    switch FeaturesFixture.step(next) {
    case .action(let action):
      if !flags.contains(.notUndoable) {
        if !flags.contains(.continuesGroup) || stacks.undo.isEmpty { stacks.undo.append(seq) }
        stacks.redo.removeAll()
      }
      state.apply(action)
    case .marker:
      break
    case .restore:
      stacks.undo.append(seq)
      stacks.redo.removeAll()
    case .undo:
      stacks.undo.removeLast()
      stacks.redo.append(seq)
    case .redo:
      stacks.redo.removeLast()
      stacks.undo.append(seq)
    }
    if let target {
      guard let jumped = states[target] else {
        throw FixtureModelError(description: "entry \(next): no state after \(target)")
      }
      state = jumped
    }
    states[next] = state
    seq = next
  }

  /// Forgets steps that return to entries before `cut`, as the engine does when it opens a compacted log.
  public mutating func compact(at cut: UInt64) {
    stacks.undo.removeAll { $0 < cut }
    stacks.redo.removeAll { $0 < cut }
  }
}

/// A plan the model cannot follow.
public struct FixtureModelError: Error, CustomStringConvertible {
  /// What went wrong.
  public var description: String
}
