/// What an entry records. Stored as one byte; see `docs/log-format.md`.
public enum EntryKind: UInt8, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
  /// An action the app sent (or an effect sent back).
  case action = 1
  /// A jump to the state after another entry (`restore(to:)`); the payload names the target.
  case restore = 2
  /// An undo step; the payload names the state it restores.
  case undo = 3
  /// A redo step; the payload names the state it restores.
  case redo = 4
  /// A marker with no effect on state (a label, a checkpoint note).
  case marker = 5

  /// The lower-case name used in tools and exports.
  public var description: String {
    switch self {
    case .action: "action"
    case .restore: "restore"
    case .undo: "undo"
    case .redo: "redo"
    case .marker: "marker"
    }
  }

  /// Parses a name produced by ``description``.
  public init?(name: String) {
    guard let kind = Self.allCases.first(where: { $0.description == name }) else { return nil }
    self = kind
  }
}
