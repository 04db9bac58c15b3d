/// Where a restore, undo or redo entry leads, in terms of the original entries.
///
/// A jump entry's payload names a target: the entry whose resulting state becomes
/// current. The target may itself be a jump (undoing an undo, restoring to a redo), whose
/// state is in turn its own target's. ``ActionLog/resolveJump(_:)`` follows that chain to
/// the entry that produced the state: an action or a marker, or 0 for the initial state.
///
/// ```swift
/// if let jump = try log.resolveJump(record) {
///   print("\(record.kind) → state after \(jump.state) (\(jump.stateTypeName ?? "initial state"))")
/// }
/// ```
public struct JumpResolution: Sendable, Hashable {
  /// The target the jump entry names itself.
  public var target: UInt64
  /// The entry whose resulting state the jump makes current (an action or marker), or 0
  /// for the initial state. When ``isComplete`` is `false`, the last entry the chain reached.
  public var state: UInt64
  /// The entries followed, from ``target`` to ``state``: more than one when jumps target jumps.
  public var chain: [UInt64]
  /// The type name of the entry at ``state``; `nil` for the initial state or an entry the log no longer holds.
  public var stateTypeName: String?
  /// `false` when the chain leads to an entry the log no longer holds (compacted away, or
  /// a damaged target): ``state`` is then as far as it could be followed.
  public var isComplete: Bool

  /// Creates a resolution.
  public init(target: UInt64, state: UInt64, chain: [UInt64], stateTypeName: String?, isComplete: Bool) {
    self.target = target
    self.state = state
    self.chain = chain
    self.stateTypeName = stateTypeName
    self.isComplete = isComplete
  }

  /// `state after 2074 (deposit)`, `initial state`, or `state after 12 (no longer in the log)`.
  public var summary: String {
    if state == 0 && isComplete { return "initial state" }
    return "state after \(state) (\(stateTypeName ?? "no longer in the log"))"
  }
}
