import ChronicleLog

/// Resolves restore, undo and redo entries to the states they return to, remembering each
/// answer (a listing meets the same jump in both of its passes).
package struct JumpResolver {
  let log: ActionLog
  private var cache: [UInt64: JumpResolution?] = [:]

  package init(_ log: ActionLog) { self.log = log }

  /// The resolution for `record`, or `nil` for an action, a marker, or a jump whose payload
  /// is not a target (shown as stored).
  package mutating func resolve(_ record: StoredEntry) -> JumpResolution? {
    switch record.kind {
    case .action, .marker: return nil
    case .restore, .undo, .redo: break
    }
    if let known = cache[record.seq] { return known }
    let resolution = try? log.resolveJump(record)
    cache[record.seq] = resolution
    return resolution
  }
}
