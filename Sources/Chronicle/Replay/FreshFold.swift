import ChronicleLog

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
    var cursor = UndoCursor(state: replayer.initialState, seq: 0)
    var plan = try replayer.plan(after: 0, through: last)
    plan.needAll()
    let segment = FoldSegment(base: cursor, through: last, plan: plan)
    var resolved: [UInt64: State] = [:]
    _ = try replayer.run(segment, into: &cursor, resolved: &resolved, cachingKeyframes: false, statesOnly: false, body)
  }
}
