import Synchronization
import Observation

/// One committed entry as observers of commits see it (for test and debugging tools).
public struct Commit<State: Sendable, Action: Sendable>: Sendable {
  @usableFromInline
  init(seq: UInt64, action: Action?, isFromEffect: Bool, old: State, new: State) {
    self.seq = seq
    self.action = action
    self.isFromEffect = isFromEffect
    self.old = old
    self.new = new
  }

  /// The entry's sequence number.
  public var seq: UInt64
  /// The action, or `nil` for restore, undo and redo entries.
  public var action: Action?
  /// Whether an effect (or middleware) sent the action.
  public var isFromEffect: Bool
  /// The state before the entry.
  public var old: State
  /// The state after it.
  public var new: State
}
