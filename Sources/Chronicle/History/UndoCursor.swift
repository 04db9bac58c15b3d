import ChronicleLog

extension UndoCursor: Sendable where State: Sendable {}

/// What replaying the log reconstructs: the current state and the undo and
/// redo stacks, after entry `seq`.
///
/// Live sends and replay go through the same transitions, so reopening a log
/// reproduces the state *and* the stacks exactly. Undo semantics are a text
/// editor's: a new undoable action clears the redo stack (the old branch stays
/// in the log); undo and redo jump to the state a step recorded.
@usableFromInline struct UndoCursor<State> {
  /// How many steps of each stack keep their state in memory.
  @inlinable static var retainedStates: Int { 8 }

  @usableFromInline var state: State
  @usableFromInline var seq: UInt64
  @usableFromInline var undo = StepStack<State>()
  @usableFromInline var redo = StepStack<State>()

  /// Resolves the state after an entry, for steps that no longer hold theirs.
  @usableFromInline typealias Resolve = (UInt64) throws(ChronicleError) -> State

  /// Entry `seq` applied an action to the state before it, `old` (if kept:
  /// only the newest undo steps need it). The caller sets ``state`` once the
  /// entries of a batch are recorded: `send`'s path.
  @inlinable
  mutating func recordAction(seq: UInt64, flags: EntryFlags, undoDepth: Int, old: State?) {
    recordStep(flags: flags, undoDepth: undoDepth, keeping: old)
    self.seq = seq
  }

  /// Entry `seq` applied an action, which `change` applies to the state in place: replay's path.
  ///
  /// The undo step holds only its sequence number, so the old state is not kept
  /// alive and the reducer changes the state without copying it (the step's
  /// state is computed again if an undo ever reaches it).
  @inlinable
  mutating func replayAction(seq: UInt64, flags: EntryFlags, undoDepth: Int, _ change: (inout State) -> Void) {
    recordStep(flags: flags, undoDepth: undoDepth, keeping: nil)
    change(&state)
    self.seq = seq
  }

  @inlinable
  mutating func recordStep(flags: EntryFlags, undoDepth: Int, keeping old: State?) {
    guard !flags.contains(.notUndoable) else { return }
    if !flags.contains(.continuesGroup) || undo.isEmpty {
      undo.push(seq, state: old, depth: undoDepth, retained: Self.retainedStates)
    }
    redo.removeAll()
  }

  /// Entry `seq` jumped to `targetState` (the state after entry `target`); the jump is itself undoable.
  @usableFromInline
  mutating func applyRestore(seq: UInt64, targetState: State, undoDepth: Int) {
    undo.push(self.seq, state: state, depth: undoDepth, retained: Self.retainedStates)
    redo.removeAll()
    state = targetState
    self.seq = seq
  }

  /// Entry `seq` undid the newest step; returns the step's target, or `nil` if there was none.
  @usableFromInline
  mutating func applyUndo(seq: UInt64, undoDepth: Int, resolve: Resolve) throws(ChronicleError) -> UInt64? {
    try Self.move(from: &undo, to: &redo, state: &state, position: &self.seq, seq: seq, depth: undoDepth, resolve)
  }

  /// Entry `seq` redid the newest undone step; returns its target, or `nil` if there was none.
  @usableFromInline
  mutating func applyRedo(seq: UInt64, undoDepth: Int, resolve: Resolve) throws(ChronicleError) -> UInt64? {
    try Self.move(from: &redo, to: &undo, state: &state, position: &self.seq, seq: seq, depth: undoDepth, resolve)
  }

  /// Pops the newest step of `source` and makes its state current, pushing the current state onto `destination`.
  private static func move(
    from source: inout StepStack<State>, to destination: inout StepStack<State>, state: inout State,
    position: inout UInt64, seq: UInt64, depth: Int, _ resolve: Resolve
  ) throws(ChronicleError) -> UInt64? {
    guard let step = source.last else { return nil }
    let target: State
    if let known = step.state { target = known } else { target = try resolve(step.seq) }
    source.removeLast()
    destination.push(position, state: state, depth: depth, retained: retainedStates)
    state = target
    position = seq
    return step.seq
  }

  /// Entry `seq` jumped to `targetState` although the stacks did not say so (they were
  /// cut shorter by a smaller undo depth): the entry's target is the truth.
  @usableFromInline
  mutating func applyUnexpectedJump(seq: UInt64, to targetState: State, undoing: Bool) {
    if undoing {
      undo.removeAll()
      redo.append(Step(seq: self.seq, state: state))
    } else {
      redo.removeAll()
      undo.append(Step(seq: self.seq, state: state))
    }
    state = targetState
    self.seq = seq
  }

  /// Entry `seq` applied an action whose result nothing needs: the stacks change
  /// as ``replayAction(seq:flags:undoDepth:_:)`` changes them, the state does not.
  @inlinable
  mutating func skipAction(seq: UInt64, flags: EntryFlags, undoDepth: Int) {
    recordStep(flags: flags, undoDepth: undoDepth, keeping: nil)
    self.seq = seq
  }

  /// Entry `seq`, a restore, undo or redo, jumped to the state after `target`:
  /// the stacks change as a live store changes them, holding sequence numbers
  /// only (a step's state is computed when it is reached); the state becomes
  /// `newState` if given, else it stays as it is and is no longer the real one.
  @usableFromInline
  mutating func applyJump(_ kind: EntryKind, seq: UInt64, target: UInt64, undoDepth: Int, state newState: State?) {
    switch kind {
    case .restore:
      undo.push(self.seq, state: nil, depth: undoDepth, retained: Self.retainedStates)
      redo.removeAll()
    case .undo where undo.last?.seq == target:
      undo.removeLast()
      redo.push(self.seq, state: nil, depth: undoDepth, retained: Self.retainedStates)
    case .redo where redo.last?.seq == target:
      redo.removeLast()
      undo.push(self.seq, state: nil, depth: undoDepth, retained: Self.retainedStates)
    case .undo:
      undo.removeAll()
      redo.append(Step(seq: self.seq, state: nil))
    case .redo:
      redo.removeAll()
      undo.append(Step(seq: self.seq, state: nil))
    case .action, .marker:
      break
    }
    if let newState { state = newState }
    self.seq = seq
  }

  /// A marker: nothing changes but the position.
  @usableFromInline
  mutating func applyMarker(seq: UInt64) { self.seq = seq }

  /// The stacks as a snapshot stores them: sequence numbers only.
  var stacks: UndoStacks { UndoStacks(undo: undo.sequenceNumbers, redo: redo.sequenceNumbers) }

  /// Restores the stacks from a snapshot; their states are resolved when needed.
  mutating func restoreStacks(_ stacks: UndoStacks) {
    undo = StepStack(stacks.undo)
    redo = StepStack(stacks.redo)
  }
}
