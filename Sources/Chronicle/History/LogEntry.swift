import ChronicleLog
import Foundation

/// One entry of the audit trail, with its action decoded.
///
/// ```swift
/// for entry in try store.history where entry.kind == .action {
///   print(entry.seq, entry.date, entry.typeName, entry.metadata["user"] ?? "-")
/// }
/// ```
public struct LogEntry<Action: Sendable>: Sendable {
  /// The sequence number.
  public var seq: UInt64
  /// When it was committed.
  public var date: Date
  /// What it records: an action, or a restore/undo/redo jump, or a marker.
  public var kind: EntryKind
  /// The action's type name (`increment`), or `restore`/`undo`/`redo`.
  public var typeName: String
  /// The audit metadata sent with it.
  public var metadata: [String: String]
  /// The decoded action (for `.action` entries).
  public var action: Action?
  /// For restore, undo and redo entries: the entry whose resulting state became current (0: the initial state).
  public var target: UInt64?
  /// Whether an effect sent the action.
  public var isFromEffect: Bool
  /// Whether the action is an undo step of its own.
  public var isUndoable: Bool
}

extension Store {
  /// The whole audit trail, oldest first.
  public var history: [LogEntry<Action>] {
    get throws { try entries(in: 0...UInt64.max) }
  }

  /// The audit trail entries whose sequence numbers fall in `range` (clamped to what the log holds).
  public func entries(in range: ClosedRange<UInt64>) throws -> [LogEntry<Action>] {
    var result: [LogEntry<Action>] = []
    let first: UInt64
    do { first = try log.meta().anchor.seq + 1 } catch { throw ChronicleError(error) }
    let last = lastSeq
    guard range.upperBound >= first, range.lowerBound <= last, first <= last else { return [] }
    let bounded = max(range.lowerBound, first)...min(range.upperBound, last)
    do {
      try log.scan(in: bounded) { entry in
        var logEntry = LogEntry<Action>(
          seq: entry.seq, date: Date(microsecondsSince1970: entry.timestamp), kind: entry.kind,
          typeName: entry.typeName, metadata: entry.metadata, action: nil, target: nil,
          isFromEffect: entry.flags.contains(.fromEffect), isUndoable: !entry.flags.contains(.notUndoable))
        switch entry.kind {
        case .action: logEntry.action = try replayer.decodeAction(entry)
        case .restore, .undo, .redo: logEntry.target = try replayer.decodeTarget(entry)
        case .marker: break
        }
        result.append(logEntry)
      }
    } catch {
      throw ChronicleError(error)
    }
    return result
  }
}
