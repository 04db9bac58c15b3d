import ChronicleLog
import Foundation
import Synchronization

/// Folds the log into states: recovery, `state(at:)`, replay checks.
///
/// It runs the reducer over logged actions (never their effects) and applies
/// restore, undo and redo entries with the same transitions a live store uses.
///
/// The per-entry path (``recover()``, ``fold(_:through:cachingKeyframes:)``,
/// ``apply(_:to:stateAt:)``) is `@inlinable`, so that it is specialized for the
/// app's state and action types where the store is opened: unspecialized, each
/// entry paid for about twenty generic-metadata lookups.
@usableFromInline struct Replayer<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  @usableFromInline let log: ActionLog
  @usableFromInline let initialState: State
  @usableFromInline let reducer: AnyReducer<State, Action>
  @usableFromInline let options: StoreOptions
  @usableFromInline let keyframes: Keyframes<State>?

  @usableFromInline
  init(
    log: ActionLog, initialState: State, reducer: AnyReducer<State, Action>, options: StoreOptions,
    keyframes: Keyframes<State>?
  ) {
    self.log = log
    self.initialState = initialState
    self.reducer = reducer
    self.options = options
    self.keyframes = keyframes
  }

  // MARK: - Decoding

  @inlinable
  func decodeAction(_ entry: EntryView) throws(ChronicleError) -> Action {
    guard entry.schemaVersion == options.schemaVersion else { return try migrateAction(entry) }
    do {
      return try entry.codec.decode(Action.self, from: entry.payload)
    } catch {
      throw .undecodableEntry(seq: entry.seq, type: entry.typeName, underlying: error)
    }
  }

  /// Decodes an entry written with another action schema version, through the app's migrations.
  @usableFromInline
  func migrateAction(_ entry: EntryView) throws(ChronicleError) -> Action {
    let typeName = entry.typeName
    do {
      guard entry.schemaVersion < options.schemaVersion else {
        throw MigrationError(
          message: "written with action schema \(entry.schemaVersion), newer than this app's \(options.schemaVersion)")
      }
      let migration =
        options.migrations.first { $0.fromVersion == entry.schemaVersion && $0.typeName == typeName }
        ?? options.migrations.first { $0.fromVersion == entry.schemaVersion && $0.typeName == nil }
      guard let migration else { return try entry.codec.decode(Action.self, from: entry.payload) }
      let converted = try migration.convert(entry.codec, entry.payload)
      guard let action = converted as? Action else {
        throw MigrationError(message: "the migration from version \(entry.schemaVersion) produced \(type(of: converted)), not \(Action.self)")
      }
      return action
    } catch {
      throw .undecodableEntry(seq: entry.seq, type: typeName, underlying: error)
    }
  }

  @usableFromInline
  func decodeTarget(_ entry: EntryView) throws(ChronicleError) -> UInt64 {
    do {
      return try entry.codec.decode(JumpTarget.self, from: entry.payload).target
    } catch {
      throw .undecodableEntry(seq: entry.seq, type: entry.typeName, underlying: error)
    }
  }

  // MARK: - Folding

  /// Applies entry `entry` to `cursor`, with the transitions a live store uses.
  /// Restore, undo and redo entries take the state they jump to from `stateAt`
  /// (by default: nearest snapshot or keyframe, then a fold).
  @inlinable
  func apply(
    _ entry: EntryView, to cursor: inout UndoCursor<State>,
    stateAt: ((UInt64) throws(ChronicleError) -> State)? = nil
  ) throws(ChronicleError) {
    func state(at seq: UInt64) throws(ChronicleError) -> State {
      if let stateAt { return try stateAt(seq) }
      return try self.state(at: seq).state
    }
    switch entry.kind {
    case .action:
      let action = try decodeAction(entry)
      cursor.replayAction(seq: entry.seq, flags: entry.flags, undoDepth: options.undoDepth) { state in
        _ = reducer.reduce(into: &state, action: action)
      }
    case .restore:
      let target = try decodeTarget(entry)
      cursor.applyRestore(seq: entry.seq, targetState: try state(at: target), undoDepth: options.undoDepth)
    case .undo, .redo:
      let target = try decodeTarget(entry)
      let undoing = entry.kind == .undo
      if (undoing ? cursor.undo : cursor.redo).last?.seq == target {
        _ =
          undoing
          ? try cursor.applyUndo(seq: entry.seq, undoDepth: options.undoDepth, resolve: state(at:))
          : try cursor.applyRedo(seq: entry.seq, undoDepth: options.undoDepth, resolve: state(at:))
      } else {
        cursor.applyUnexpectedJump(seq: entry.seq, to: try state(at: target), undoing: undoing)
      }
    case .marker:
      cursor.applyMarker(seq: entry.seq)
    }
  }

  /// Folds entries `cursor.seq + 1 … seq` into `cursor`; with `cachingKeyframes`,
  /// keeps a keyframe every ``KeyframeCache/interval`` entries on the way.
  ///
  /// Linear in the entries folded: the states that restore, undo and redo
  /// entries jump to are computed once (see ``JumpPlan``), never by folding
  /// again from a snapshot for each jump.
  @inlinable
  func fold(_ cursor: inout UndoCursor<State>, through seq: UInt64, cachingKeyframes: Bool = false)
    throws(ChronicleError) -> Int
  {
    guard seq > cursor.seq else { return 0 }
    var plan = try plan(after: cursor.seq, through: seq)
    plan.need(CollectionOfOne(seq))
    let main = FoldSegment(base: cursor, through: seq, plan: plan)
    var resolved = try resolveOutside(plan.outside)
    return try run(main, into: &cursor, resolved: &resolved, cachingKeyframes: cachingKeyframes)
  }

  /// The states after each of `seqs`, all before some range being folded.
  ///
  /// Found top-down: the highest wanted seq gets the nearest base at or before
  /// it, and every wanted seq from that base up is computed by the same fold;
  /// the jumps of that range may want states further down, which the next
  /// segment (entirely below this one) computes. Folded bottom-up, so that
  /// each segment finds the states its jumps need. Segments are disjoint:
  /// every entry is folded at most once. Iterative, so that a long chain of
  /// segments does not deepen the stack.
  @inlinable
  func resolveOutside(_ seqs: Set<UInt64>) throws(ChronicleError) -> [UInt64: State] {
    var resolved: [UInt64: State] = [:]
    guard !seqs.isEmpty else { return resolved }
    var pending = seqs
    var segments: [FoldSegment<State>] = []
    var warnings: [String] = []
    while let top = pending.max() {
      let (base, _) = try base(atOrBefore: top, warnings: &warnings)
      let exports = pending.filter { $0 >= base.seq }
      var plan = try plan(after: base.seq, through: top)
      plan.need(exports)
      var segment = FoldSegment(base: base, through: top, plan: plan)
      segment.exports = exports
      pending.subtract(exports)
      pending.formUnion(plan.outside)
      segments.append(segment)
    }
    for segment in segments.reversed() {
      var cursor = segment.base
      _ = try run(segment, into: &cursor, resolved: &resolved, cachingKeyframes: true)
    }
    return resolved
  }

  /// The jumps of entries `start + 1 … last`: a scan that decodes only their targets.
  @inlinable
  func plan(after start: UInt64, through last: UInt64) throws(ChronicleError) -> JumpPlan {
    var plan = JumpPlan(base: start)
    guard last > start else { return plan }
    do {
      // Only the jumps' payloads are read: the other entries of an encrypted log stay sealed.
      try log.scan(in: (start + 1)...last, opening: { $0.kind != .action && $0.kind != .marker }) { entry in
        switch entry.kind {
        case .restore, .undo, .redo:
          let target = try decodeTarget(entry)
          guard target < entry.seq else {
            throw ChronicleError.log(
              .corruptEntry(
                path: log.path, seq: entry.seq,
                reason: "its \(entry.kind) jumps to entry \(target), which is not before it"))
          }
          plan.add(jump: entry.seq, target: target)
        case .action, .marker: break
        }
      }
    } catch {
      throw ChronicleError(error)
    }
    return plan
  }

  /// Folds `segment` into `cursor` (which starts as its base), taking the
  /// states its jumps need from `resolved` (below its base) or from the states
  /// it keeps on the way, and storing the states of its exports into `resolved`.
  ///
  /// With `statesOnly`, only the jumps the plan marked live get their target's
  /// state: after any other jump the state is not needed by anything (the next
  /// live jump replaces it), so the fold skips reducing until then. The stacks
  /// are kept exactly, as sequence numbers. Otherwise every jump is applied with
  /// the transitions a live store uses, and `body` sees every entry's seq and
  /// the state after it (`false` stops).
  @inlinable
  func run(
    _ segment: FoldSegment<State>, into cursor: inout UndoCursor<State>, resolved: inout [UInt64: State],
    cachingKeyframes: Bool, statesOnly: Bool = true, _ body: (UInt64, State) -> Bool = { _, _ in true }
  ) throws(ChronicleError) -> Int {
    var plan = segment.plan
    let baseSeq = segment.base.seq
    var kept: [UInt64: State] = [:]
    for (seq, _) in plan.uses where seq <= baseSeq {
      kept[seq] = seq == baseSeq ? segment.base.state : resolved[seq]
    }
    if segment.exports.contains(baseSeq) { resolved[baseSeq] = segment.base.state }
    guard segment.through > baseSeq else { return 0 }
    var count = 0
    var current = cursor
    var exported: [UInt64: State] = [:]
    let hasExports = !segment.exports.isEmpty
    // Whether `current.state` is the real state after `current.seq` (see `statesOnly`).
    var valid = true
    do {
      try log.scan(in: (baseSeq + 1)...segment.through) { entry in
        func keptState(_ seq: UInt64) throws(ChronicleError) -> State {
          if let state = kept[plan.canonical(of: seq)] { return state }
          // Not planned (the plan and the entries disagree): compute it on its own.
          keyframes?.unplannedFolds.add(1, ordering: .relaxed)
          guard statesOnly else {
            throw .unsupported("entry \(entry.seq) jumps to entry \(seq), whose state this fold did not keep")
          }
          return try self.state(at: seq).state
        }
        let isJump = entry.kind != .action && entry.kind != .marker
        if !statesOnly {
          try apply(entry, to: &current, stateAt: keptState)
        } else if isJump {
          let target = try decodeTarget(entry)
          var state: State?
          if plan.live.contains(entry.seq) {
            state = try keptState(target)
            valid = true
          } else {
            valid = false
          }
          current.applyJump(entry.kind, seq: entry.seq, target: target, undoDepth: options.undoDepth, state: state)
        } else if valid || entry.kind == .marker {
          try apply(entry, to: &current)
        } else {
          current.skipAction(seq: entry.seq, flags: entry.flags, undoDepth: options.undoDepth)
        }
        count += 1
        // Without jumps (the common case) there is nothing to look up.
        if !plan.uses.isEmpty {
          if isJump, let target = plan.jumps[entry.seq] {
            if (!statesOnly || plan.live.contains(entry.seq)) && plan.release(target) { kept[target] = nil }
          } else if valid, plan.uses[entry.seq] != nil {
            kept[entry.seq] = current.state
          }
        }
        if hasExports, segment.exports.contains(entry.seq) {
          if !valid { keyframes?.unplannedFolds.add(1, ordering: .relaxed) }
          exported[entry.seq] = valid ? current.state : try self.state(at: entry.seq).state
        }
        if valid, cachingKeyframes, let keyframes, entry.seq % KeyframeCache<State>.interval == 0 {
          keyframes.cache.withLock { $0.insert(current) }
        }
        if !body(entry.seq, current.state) { throw FoldStop() }
      }
    } catch is FoldStop {
      // The caller has seen enough.
    } catch {
      throw ChronicleError(error)
    }
    resolved.merge(exported) { _, new in new }
    cursor = current
    return count
  }

  // MARK: - States at any point

  /// The cursor (state and stacks) after entry `seq`: nearest keyframe or snapshot, then a fold.
  @usableFromInline
  func state(at seq: UInt64) throws(ChronicleError) -> UndoCursor<State> {
    var warnings: [String] = []
    var (cursor, _) = try base(atOrBefore: seq, warnings: &warnings)
    _ = try fold(&cursor, through: seq, cachingKeyframes: true)
    return cursor
  }

  /// The best starting point at or before `seq`, and the snapshot it came from, if any.
  ///
  /// On a compacted log, the snapshot at the cut is tied to the chain anchor
  /// (its entry is gone); a seq before the cut throws ``ChronicleError/compacted(seq:cut:)``.
  @usableFromInline
  func base(atOrBefore seq: UInt64, warnings: inout [String]) throws(ChronicleError)
    -> (UndoCursor<State>, snapshot: UInt64?)
  {
    let anchor: ChainAnchor
    do { anchor = try log.meta().anchor } catch { throw ChronicleError(error) }
    guard seq >= anchor.seq else { throw .compacted(seq: seq, cut: anchor.seq) }
    let cached = keyframes?.cache.withLock { $0.best(atOrBefore: seq) }
    if let cached, cached.seq == seq, cached.seq >= anchor.seq { return (cached, nil) }
    var best: (UndoCursor<State>, snapshot: UInt64?)? = cached.flatMap { $0.seq >= anchor.seq ? ($0, nil) : nil }
    var skipped: [String] = []
    do {
      try log.forEachSnapshot(atOrBefore: seq, after: best?.0.seq) { info in
        guard info.seq >= anchor.seq, info.seq > 0 else { return false }
        guard let cursor = loadSnapshot(info, anchor: anchor, warnings: &skipped) else { return true }
        best = (cursor, info.seq)
        return false
      }
    } catch {
      throw ChronicleError(error)
    }
    warnings += skipped
    if let best { return best }
    guard anchor.seq == 0 else {
      let why = skipped.isEmpty ? "" : " (\(skipped.joined(separator: "; ")))"
      throw .unsupported(
        "\(log.path) was compacted at entry \(anchor.seq) and no snapshot this app can use (state schema "
          + "\(options.stateSchemaVersion)) lies between the cut and entry \(seq)\(why): raise "
          + "StoreOptions.stateSchemaVersion when State changes and add a StateMigration from the version "
          + "of the snapshot at the cut, or open it with that version")
    }
    return (UndoCursor(state: initialState, seq: 0), nil)
  }

  /// Decodes a snapshot into a cursor, or explains in `warnings` why it cannot be used.
  func loadSnapshot(_ info: SnapshotInfo, warnings: inout [String]) -> UndoCursor<State>? {
    guard let anchor = try? log.meta().anchor else {
      warnings.append("snapshot at \(info.seq) skipped: the log's meta cannot be read")
      return nil
    }
    return loadSnapshot(info, anchor: anchor, warnings: &warnings)
  }

  /// Decodes a snapshot into a cursor, or explains in `warnings` why it cannot be used.
  func loadSnapshot(_ info: SnapshotInfo, anchor: ChainAnchor, warnings: inout [String]) -> UndoCursor<State>? {
    var reason: String?
    let cursor = loadSnapshot(info, anchor: anchor, whyNot: &reason)
    if let reason { warnings.append("snapshot at \(info.seq) skipped: \(reason)") }
    return cursor
  }

  private func loadSnapshot(_ info: SnapshotInfo, anchor: ChainAnchor, whyNot reason: inout String?)
    -> UndoCursor<State>?
  {
    func skip(_ why: String) -> UndoCursor<State>? {
      reason = why
      return nil
    }
    let migration = options.stateMigrations.last { $0.fromVersion == info.schemaVersion }
    guard info.schemaVersion == options.stateSchemaVersion || migration != nil else {
      return skip(
        "state schema \(info.schemaVersion), this app uses \(options.stateSchemaVersion) and has no "
          + "StateMigration from \(info.schemaVersion)")
    }
    guard info.seq >= anchor.seq else { return skip("it lies before the cut at entry \(anchor.seq)") }
    let snapshot: Snapshot
    do {
      guard let stored = try log.snapshot(at: info.seq) else { return skip("it was deleted meanwhile") }
      snapshot = stored
      // The entry at the cut is gone: the anchor holds its hash.
      let expected = snapshot.seq == anchor.seq ? anchor.hash : try log.record(at: snapshot.seq)?.hash
      if snapshot.seq > 0, expected != snapshot.chainHash {
        return skip("its chain hash does not match entry \(snapshot.seq)")
      }
    } catch {
      return skip("\(error)")
    }
    do {
      let state: State
      if info.schemaVersion != options.stateSchemaVersion, let migration {
        guard let migrated = try migration.convert(snapshot.codec, snapshot.state) as? State else {
          return skip(
            "its StateMigration from \(info.schemaVersion) makes \(migration.stateTypeName), not \(State.self)")
        }
        state = migrated
      } else {
        state = try snapshot.codec.decode(State.self, from: snapshot.state)
      }
      var cursor = UndoCursor(state: state, seq: snapshot.seq)
      if !snapshot.auxiliary.isEmpty {
        var stacks = try snapshot.codec.decode(UndoStacks.self, from: snapshot.auxiliary)
        // Steps that return to entries compaction removed can no longer be taken.
        stacks.undo.removeAll { $0 < anchor.seq }
        stacks.redo.removeAll { $0 < anchor.seq }
        cursor.restoreStacks(stacks)
      }
      return cursor
    } catch {
      let version = info.schemaVersion == options.stateSchemaVersion ? "" : " through its StateMigration"
      return skip("it does not decode as \(State.self)\(version): \(error)")
    }
  }

  /// Opens an existing log: newest usable snapshot, then replay of the entries after it.
  @inlinable
  func recover() throws(ChronicleError) -> Recovered<State> {
    let start = ContinuousClock.now
    let head: ChainAnchor
    do { head = try log.head() } catch { throw ChronicleError(error) }
    var warnings: [String] = []
    var (cursor, snapshot) = try base(atOrBefore: head.seq, warnings: &warnings)
    let replayed = try fold(&cursor, through: head.seq)
    return Recovered(
      cursor: cursor,
      report: RecoveryReport(
        snapshotSeq: snapshot, entriesReplayed: replayed, lastSeq: head.seq, duration: ContinuousClock.now - start,
        warnings: warnings))
  }
}
