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
extension StepStack: Sendable where State: Sendable {}
extension Timeline: Sendable where State: Sendable {}

/// An undo or redo stack, newest last, bounded by a depth.
///
/// The steps are kept as sequence numbers, and the states of the newest few
/// apart, so that pushing a step without a state (all of them during replay)
/// touches no generic storage. Pushing past the depth drops the oldest step in
/// amortized O(1): dropped sequence numbers stay, uncounted, until as many have
/// piled up as the depth, and are then removed at once. A stack never holds a
/// sequence number twice (a step is the position the timeline left, and
/// positions only grow), so a kept state is found by its sequence number.
@usableFromInline struct StepStack<State>: RandomAccessCollection {
  @usableFromInline var seqs: [UInt64] = []
  @usableFromInline var start = 0
  /// The states of the newest steps that keep one, oldest first.
  @usableFromInline var states: [(seq: UInt64, state: State)] = []

  init(_ seqs: [UInt64] = []) { self.seqs = seqs }

  @inlinable var startIndex: Int { 0 }
  @inlinable var endIndex: Int { seqs.count - start }
  @inlinable subscript(position: Int) -> Step<State> { step(seqs[start + position]) }
  // Written out: the collection defaults measure through `distance(from:to:)`,
  // which costs thousands of instructions in unspecialized code.
  @inlinable var count: Int { seqs.count - start }
  @inlinable var isEmpty: Bool { seqs.count == start }
  @inlinable var last: Step<State>? { isEmpty ? nil : step(seqs[seqs.count - 1]) }

  /// The steps' sequence numbers, oldest first.
  var sequenceNumbers: [UInt64] { Array(seqs[start...]) }

  @inlinable
  func step(_ seq: UInt64) -> Step<State> {
    Step(seq: seq, state: states.last(where: { $0.seq == seq })?.state)
  }

  /// Pushes the step `seq`, keeping `state` if given; drops the oldest step
  /// beyond `depth`, and keeps at most `retained` states (older steps' states
  /// are computed again when reached).
  @inlinable
  mutating func push(_ seq: UInt64, state: State?, depth: Int, retained: Int) {
    seqs.append(seq)
    if seqs.count - start > depth {
      start += 1
      if start >= Swift.max(depth, 16) {
        seqs.removeFirst(start)
        start = 0
      }
    }
    if let state {
      states.append((seq, state))
      if states.count > retained { states.removeFirst(states.count - retained) }
    }
  }

  /// Pushes `step` without a bound.
  mutating func append(_ step: Step<State>) {
    seqs.append(step.seq)
    if let state = step.state { states.append((step.seq, state)) }
  }

  mutating func removeLast() {
    let seq = seqs.removeLast()
    if states.last?.seq == seq { states.removeLast() }
  }

  @inlinable
  mutating func removeAll() {
    guard seqs.count > start || !states.isEmpty else { return }
    seqs.removeAll(keepingCapacity: true)
    states.removeAll()
    start = 0
  }
}

/// What replaying the log reconstructs: the current state and the undo and
/// redo stacks, after entry `seq`.
///
/// Live sends and replay go through the same transitions, so reopening a log
/// reproduces the state *and* the stacks exactly. Undo semantics are a text
/// editor's: a new undoable action clears the redo stack (the old branch stays
/// in the log); undo and redo jump to the state a step recorded.
@usableFromInline struct Timeline<State> {
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
  var stacks: TimelineStacks { TimelineStacks(undo: undo.sequenceNumbers, redo: redo.sequenceNumbers) }

  /// Restores the stacks from a snapshot; their states are resolved when needed.
  mutating func restoreStacks(_ stacks: TimelineStacks) {
    undo = StepStack(stacks.undo)
    redo = StepStack(stacks.redo)
  }
}

/// The payload of restore, undo and redo entries: the entry whose resulting state becomes current.
struct JumpTarget: Codable, Sendable, Equatable {
  var target: UInt64
}

/// The auxiliary data of a snapshot: the undo and redo stacks at that point,
/// as the sequence numbers whose states they return to (newest last).
struct TimelineStacks: Codable, Equatable {
  var undo: [UInt64]
  var redo: [UInt64]
}
