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
    var fold = FreshFold(replayer: replayer)
    try fold.run(through: lastSeq, body)
  }
}

/// A fold of the log from the initial state that uses the entries alone.
///
/// Restore, undo and redo entries need the state after an earlier entry; the
/// fold keeps a timeline every ``interval`` entries and folds forward from the
/// nearest one, so memory stays bounded by the log's length over the interval.
struct FreshFold<State: Codable & Sendable, Action: Codable & Sendable> {
  /// Timelines are kept at multiples of this sequence number.
  static var interval: UInt64 { 256 }
  /// Entries folded per read transaction.
  static var chunk: UInt64 { 4_096 }

  let replayer: Replayer<State, Action>
  private var keyframes: [UInt64: Timeline<State>] = [:]

  init(replayer: Replayer<State, Action>) { self.replayer = replayer }

  /// Stops a scan early when the caller has seen enough.
  private struct Stop: Error {}

  /// Folds entries `1 … last`, calling `body` after each.
  mutating func run(through last: UInt64, _ body: (UInt64, State) -> Bool) throws(ChronicleError) {
    guard last > 0 else { return }
    let anchor: ChainAnchor
    do { anchor = try replayer.log.meta().anchor } catch { throw ChronicleError(error) }
    guard anchor.seq == 0 else {
      throw .unsupported(
        "the log was compacted at entry \(anchor.seq): it cannot be replayed from the initial state")
    }
    var timeline = Timeline(state: replayer.initialState, seq: 0)
    do {
      // A read transaction per chunk: a long replay (with a slow `body`) never keeps a
      // writer from reusing pages for long.
      var lower: UInt64 = 1
      while lower <= last {
        let upper = last - lower >= Self.chunk ? lower + Self.chunk - 1 : last
        try replayer.log.scan(in: lower...upper) { entry in
          try apply(entry, to: &timeline)
          if entry.seq % Self.interval == 0 { keyframes[entry.seq] = timeline }
          if !body(entry.seq, timeline.state) { throw Stop() }
        }
        lower = upper + 1
      }
    } catch is Stop {
      return
    } catch {
      throw error.asChronicleError
    }
  }

  /// The state after entry `seq`, folded from the nearest kept timeline.
  private func state(at seq: UInt64) throws(ChronicleError) -> State {
    guard seq > 0 else { return replayer.initialState }
    var start = Timeline(state: replayer.initialState, seq: 0)
    for (key, frame) in keyframes where key <= seq && key > start.seq { start = frame }
    guard start.seq < seq else { return start.state }
    var timeline = start
    do {
      try replayer.log.scan(in: (start.seq + 1)...seq) { entry in try apply(entry, to: &timeline) }
    } catch {
      throw error.asChronicleError
    }
    return timeline.state
  }

  /// Applies one entry, jumping to states this fold computes itself.
  private func apply(_ entry: RawEntry, to timeline: inout Timeline<State>) throws(ChronicleError) {
    try replayer.apply(entry, to: &timeline) { seq throws(ChronicleError) in try state(at: seq) }
  }
}
