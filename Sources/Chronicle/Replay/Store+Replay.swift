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
