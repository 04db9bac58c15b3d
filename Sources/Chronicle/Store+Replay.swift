import ChronicleLog

extension Store {
  /// Folds the whole log again from the initial state, trusting nothing stored
  /// but the entries: no snapshot and no cached keyframe is used. `body` gets
  /// the sequence number of every entry and the state after it, in log order.
  ///
  /// This is the determinism check behind `TestStore.assertReplayMatches()`:
  /// a reducer that reads the clock, a random number or any other outside
  /// state produces another state here than it did live.
  ///
  /// ```swift
  /// try store.replayStates { seq, state in
  ///   print(seq, state)
  ///   return true  // `false` stops the replay
  /// }
  /// ```
  ///
  /// Entries committed while the replay runs are not included: it stops at the
  /// last entry committed when it started.
  ///
  /// - Parameter body: called once per entry; return `false` to stop.
  /// - Throws: ``ChronicleError/unsupported(_:)`` when the log was compacted (its
  ///   first entries are gone, so there is nothing to fold from the initial state),
  ///   ``ChronicleError/undecodableEntry(seq:type:underlying:)``, or the log's error.
  package func replayStates(_ body: (_ seq: UInt64, _ state: State) -> Bool) throws(ChronicleError) {
    try FreshFold(replayer: replayer).run(through: lastSeq, body)
  }
}

extension Store {
  /// How many states folds computed apart because their plan missed them: 0
  /// unless jump planning is wrong (the states stay right, the cost grows).
  package var unplannedFolds: Int { replayer.keyframes?.unplannedFolds.load(ordering: .relaxed) ?? 0 }
}

/// A fold of the log from the initial state that uses the entries alone.
///
/// Restore, undo and redo entries need the state after an earlier entry: a
/// scan of the jumps first finds which states later entries return to, and the
/// fold keeps each of them until its last use (see ``JumpPlan`` for the bound),
/// so the fold is linear in the log's length.
struct FreshFold<State: Codable & Sendable, Action: Codable & Sendable> {
  let replayer: Replayer<State, Action>

  init(replayer: Replayer<State, Action>) { self.replayer = replayer }

  /// Folds entries `1 … last`, calling `body` after each.
  func run(through last: UInt64, _ body: (UInt64, State) -> Bool) throws(ChronicleError) {
    guard last > 0 else { return }
    let anchor: ChainAnchor
    do { anchor = try replayer.log.meta().anchor } catch { throw ChronicleError(error) }
    guard anchor.seq == 0 else {
      throw .unsupported(
        "the log was compacted at entry \(anchor.seq): it cannot be replayed from the initial state")
    }
    var timeline = Timeline(state: replayer.initialState, seq: 0)
    var plan = try replayer.plan(after: 0, through: last)
    plan.needAll()
    let segment = FoldSegment(base: timeline, through: last, plan: plan)
    var resolved: [UInt64: State] = [:]
    _ = try replayer.run(segment, into: &timeline, resolved: &resolved, cachingKeyframes: false, statesOnly: false, body)
  }
}
