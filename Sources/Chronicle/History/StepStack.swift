import ChronicleLog

extension StepStack: Sendable where State: Sendable {}

/// An undo or redo stack, newest last, bounded by a depth.
///
/// The steps are kept as sequence numbers, and the states of the newest few
/// apart, so that pushing a step without a state (all of them during replay)
/// touches no generic storage. Pushing past the depth drops the oldest step in
/// amortized O(1): dropped sequence numbers stay, uncounted, until as many have
/// piled up as the depth, and are then removed at once. A stack never holds a
/// sequence number twice (a step is the position the cursor left, and
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
