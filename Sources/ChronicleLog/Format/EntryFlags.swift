/// Per-entry flags. Stored as one byte; unknown bits are preserved and verified but ignored.
public struct EntryFlags: OptionSet, Sendable, Hashable, Codable {
  /// The raw byte.
  public var rawValue: UInt8
  /// Wraps a raw byte.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// The action was sent back by an effect, not by the app directly.
  public static let fromEffect = EntryFlags(rawValue: 1 << 0)
  /// The entry is not an undo step of its own (undo skips over it).
  public static let notUndoable = EntryFlags(rawValue: 1 << 1)
  /// The entry belongs to the same undo group as the entry before it.
  public static let continuesGroup = EntryFlags(rawValue: 1 << 2)

  /// Names of the set flags, for tools.
  public var names: [String] {
    var names: [String] = []
    if contains(.fromEffect) { names.append("fromEffect") }
    if contains(.notUndoable) { names.append("notUndoable") }
    if contains(.continuesGroup) { names.append("continuesGroup") }
    return names
  }
}
