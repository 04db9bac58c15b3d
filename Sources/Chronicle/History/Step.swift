import ChronicleLog

/// A state the undo or redo stack can return to: the state after entry `seq`.
///
/// Only the newest few steps keep their state in memory; older ones (and all
/// steps read back from a snapshot) hold just the sequence number, and the
/// state is computed again (`state(at:)`) when an undo or redo reaches them.
@usableFromInline struct Step<State> {
  @usableFromInline var seq: UInt64
  @usableFromInline var state: State?

  @usableFromInline
  init(seq: UInt64, state: State?) {
    self.seq = seq
    self.state = state
  }
}

extension Step: Sendable where State: Sendable {}
