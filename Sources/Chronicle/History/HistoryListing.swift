import ChronicleLog
import Foundation

/// The history as a debugger shows it: every entry, which ones the current
/// state is made of, and where undo and redo would go.
///
/// It is the durable counterpart of an in-memory time-travel debugger: going
/// back is ``Store/undo(metadata:)``, going forward ``Store/redo(metadata:)``,
/// jumping ``Store/restore(to:metadata:)``, and each move is itself an entry.
///
/// ```
/// seq  kind     type       in effect
///   1  action   deposit    ●
///   2  action   transfer   ·        ← undone
///   3  undo     undo       ●        → state after 1
///   4  redo     redo       ·        → state after 2
///   5  undo     undo       ●        → state after 1 (via 3)
///   6  action   deposit    ●        ← current
/// ```
public struct HistoryListing<Action: Sendable>: Sendable, CustomStringConvertible {
  /// One entry of the listing.
  public struct Item: Sendable {
    /// The entry.
    public var entry: LogEntry<Action>
    /// Whether the current state includes this entry's change: it lies on the
    /// path from the initial state to the current one (jumps follow their target).
    public var isInEffect: Bool
    /// For restore, undo and redo entries: the action entry whose resulting
    /// state this jump made current (0: the initial state). A jump to another
    /// jump is followed to the action, so an undo of an undo names the action
    /// it brings back, not the undo entry.
    public var restores: UInt64?
  }

  /// The entries, oldest first (the last `limit` ones when a limit was given).
  public var items: [Item]
  /// The sequence number of the last entry: the current state is the state after it.
  public var current: UInt64
  /// Where each ``Store/undo(metadata:)`` would go, next one last.
  public var undoTargets: [UInt64]
  /// Where each ``Store/redo(metadata:)`` would go, next one last.
  public var redoTargets: [UInt64]

  /// A text rendering, one line per entry.
  public var rendered: String {
    var lines = ["  seq  kind     type                 in effect"]
    for item in items {
      let seq = String(item.entry.seq).leftPadded(to: 5)
      let kind = "\(item.entry.kind)".padded(to: 8)
      let type = item.entry.typeName.padded(to: 20)
      var line = "\(seq)  \(kind) \(type) \(item.isInEffect ? "●" : "·")"
      if let restores = item.restores {
        line += restores == 0 ? "  → initial state" : "  → state after \(restores)"
        if let target = item.entry.target, target != restores { line += " (via \(target))" }
      }
      if item.entry.seq == current { line += "  ← current" }
      lines.append(line)
    }
    return lines.joined(separator: "\n")
  }

  /// ``rendered``: `print(try store.timeline())` prints the table.
  public var description: String { rendered }
}

extension String {
  fileprivate func padded(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
  fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}

extension Store {
  /// The history listing of the last `limit` entries (all for `nil`).
  public func timeline(limit: Int? = nil) throws -> HistoryListing<Action> {
    let (current, undo, redo) = writer.withLock { ($0.cursor.seq, $0.cursor.undo.sequenceNumbers, $0.cursor.redo.sequenceNumbers) }
    let entries = try history
    var bySeq: [UInt64: LogEntry<Action>] = [:]
    for entry in entries { bySeq[entry.seq] = entry }
    // Walk back from the head: actions lead to their predecessor, jumps to their target.
    var inEffect = Set<UInt64>()
    var walk = current
    while walk > 0, let entry = bySeq[walk], inEffect.insert(walk).inserted {
      walk = entry.target ?? (walk - 1)
    }
    // A jump's state is its target's: follow jumps to jumps back to an action (or the log's start).
    var restores: [UInt64: UInt64] = [:]
    for entry in entries {
      guard let target = entry.target else { continue }
      restores[entry.seq] = restores[target] ?? target
    }
    let shown = limit.map { Array(entries.suffix($0)) } ?? entries
    return HistoryListing(
      items: shown.map {
        HistoryListing.Item(entry: $0, isInEffect: inEffect.contains($0.seq), restores: restores[$0.seq])
      },
      current: current, undoTargets: undo, redoTargets: redo)
  }
}
