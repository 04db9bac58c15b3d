import ChronicleLog
import Foundation
import Synchronization

/// What opening a log did.
public struct RecoveryReport: Sendable, Hashable {
  /// The snapshot recovery started from, or `nil` for a replay from the initial state.
  public var snapshotSeq: UInt64?
  /// Entries folded after the snapshot.
  public var entriesReplayed: Int
  /// The last sequence number in the log.
  public var lastSeq: UInt64
  /// How long recovery took.
  public var duration: Duration
  /// What was skipped and why (snapshots of another state schema, damaged snapshots).
  public var warnings: [String]

  @usableFromInline
  init(snapshotSeq: UInt64?, entriesReplayed: Int, lastSeq: UInt64, duration: Duration, warnings: [String]) {
    self.snapshotSeq = snapshotSeq
    self.entriesReplayed = entriesReplayed
    self.lastSeq = lastSeq
    self.duration = duration
    self.warnings = warnings
  }
}

@usableFromInline struct Recovered<State> {
  @usableFromInline var timeline: Timeline<State>
  @usableFromInline var report: RecoveryReport

  @usableFromInline init(timeline: Timeline<State>, report: RecoveryReport) {
    self.timeline = timeline
    self.report = report
  }
}

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
  func decodeAction(_ entry: RawEntry) throws(ChronicleError) -> Action {
    guard entry.schemaVersion == options.schemaVersion else { return try migrateAction(entry) }
    do {
      return try entry.codec.decode(Action.self, from: entry.payload)
    } catch {
      throw .undecodableEntry(seq: entry.seq, type: entry.typeName, underlying: error)
    }
  }

  /// Decodes an entry written with another action schema version, through the app's migrations.
  @usableFromInline
  func migrateAction(_ entry: RawEntry) throws(ChronicleError) -> Action {
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
  func decodeTarget(_ entry: RawEntry) throws(ChronicleError) -> UInt64 {
    do {
      return try entry.codec.decode(JumpTarget.self, from: entry.payload).target
    } catch {
      throw .undecodableEntry(seq: entry.seq, type: entry.typeName, underlying: error)
    }
  }

  // MARK: - Folding

  /// Applies entry `entry` to `timeline`, with the transitions a live store uses.
  /// Restore, undo and redo entries take the state they jump to from `stateAt`
  /// (by default: nearest snapshot or keyframe, then a fold).
  @inlinable
  func apply(
    _ entry: RawEntry, to timeline: inout Timeline<State>,
    stateAt: ((UInt64) throws(ChronicleError) -> State)? = nil
  ) throws(ChronicleError) {
    func state(at seq: UInt64) throws(ChronicleError) -> State {
      if let stateAt { return try stateAt(seq) }
      return try self.state(at: seq).state
    }
    switch entry.kind {
    case .action:
      let action = try decodeAction(entry)
      timeline.replayAction(seq: entry.seq, flags: entry.flags, undoDepth: options.undoDepth) { state in
        _ = reducer.reduce(into: &state, action: action)
      }
    case .restore:
      let target = try decodeTarget(entry)
      timeline.applyRestore(seq: entry.seq, targetState: try state(at: target), undoDepth: options.undoDepth)
    case .undo, .redo:
      let target = try decodeTarget(entry)
      let undoing = entry.kind == .undo
      if (undoing ? timeline.undo : timeline.redo).last?.seq == target {
        _ =
          undoing
          ? try timeline.applyUndo(seq: entry.seq, undoDepth: options.undoDepth, resolve: state(at:))
          : try timeline.applyRedo(seq: entry.seq, undoDepth: options.undoDepth, resolve: state(at:))
      } else {
        timeline.applyUnexpectedJump(seq: entry.seq, to: try state(at: target), undoing: undoing)
      }
    case .marker:
      timeline.applyMarker(seq: entry.seq)
    }
  }

  /// Folds entries `timeline.seq + 1 … seq` into `timeline`; with `cachingKeyframes`,
  /// keeps a keyframe every ``KeyframeCache/interval`` entries on the way.
  @inlinable
  func fold(_ timeline: inout Timeline<State>, through seq: UInt64, cachingKeyframes: Bool = false)
    throws(ChronicleError) -> Int
  {
    guard seq > timeline.seq else { return 0 }
    var count = 0
    do {
      var current = timeline
      try log.scan(in: (timeline.seq + 1)...seq) { entry in
        try apply(entry, to: &current)
        count += 1
        if cachingKeyframes, let keyframes, entry.seq % KeyframeCache<State>.interval == 0 {
          keyframes.cache.withLock { $0.insert(current) }
        }
      }
      timeline = current
    } catch {
      throw error.asChronicleError
    }
    return count
  }

  // MARK: - States at any point

  /// The timeline (state and stacks) after entry `seq`: nearest keyframe or snapshot, then a fold.
  @usableFromInline
  func state(at seq: UInt64) throws(ChronicleError) -> Timeline<State> {
    var warnings: [String] = []
    var (timeline, _) = try base(atOrBefore: seq, warnings: &warnings)
    _ = try fold(&timeline, through: seq, cachingKeyframes: true)
    return timeline
  }

  /// The best starting point at or before `seq`, and the snapshot it came from, if any.
  @usableFromInline
  func base(atOrBefore seq: UInt64, warnings: inout [String]) throws(ChronicleError)
    -> (Timeline<State>, snapshot: UInt64?)
  {
    let anchor: ChainAnchor
    do { anchor = try log.meta().anchor } catch { throw ChronicleError(error) }
    guard seq >= anchor.seq else { throw .noSuchEntry(seq: seq) }
    let cached = keyframes?.cache.withLock { $0.best(atOrBefore: seq) }
    if let cached, cached.seq == seq { return (cached, nil) }
    var best: (Timeline<State>, snapshot: UInt64?)? = cached.map { ($0, nil) }
    do {
      try log.forEachSnapshot(atOrBefore: seq, after: cached?.seq) { info in
        guard info.seq > 0, let timeline = loadSnapshot(info, warnings: &warnings) else { return true }
        best = (timeline, info.seq)
        return false
      }
    } catch {
      throw error.asChronicleError
    }
    if let best { return best }
    guard anchor.seq == 0 else {
      throw .log(
        .corruptSnapshot(
          path: log.path, seq: anchor.seq,
          reason: "the log was compacted at \(anchor.seq) and no usable snapshot at or after it covers seq \(seq)"))
    }
    return (Timeline(state: initialState, seq: 0), nil)
  }

  /// Decodes a snapshot into a timeline, or explains in `warnings` why it cannot be used.
  func loadSnapshot(_ info: SnapshotInfo, warnings: inout [String]) -> Timeline<State>? {
    var reason: String?
    let timeline = loadSnapshot(info, whyNot: &reason)
    if let reason { warnings.append("snapshot at \(info.seq) skipped: \(reason)") }
    return timeline
  }

  private func loadSnapshot(_ info: SnapshotInfo, whyNot reason: inout String?) -> Timeline<State>? {
    func skip(_ why: String) -> Timeline<State>? {
      reason = why
      return nil
    }
    guard info.schemaVersion == options.stateSchemaVersion else {
      return skip("state schema \(info.schemaVersion), this app uses \(options.stateSchemaVersion)")
    }
    let snapshot: Snapshot
    do {
      guard let stored = try log.snapshot(at: info.seq) else { return skip("it was deleted meanwhile") }
      snapshot = stored
      if snapshot.seq > 0, try log.record(at: snapshot.seq)?.hash != snapshot.chainHash {
        return skip("its chain hash does not match entry \(snapshot.seq)")
      }
    } catch {
      return skip("\(error)")
    }
    do {
      let state = try snapshot.codec.decode(State.self, from: snapshot.state)
      var timeline = Timeline(state: state, seq: snapshot.seq)
      if !snapshot.auxiliary.isEmpty {
        timeline.restoreStacks(try snapshot.codec.decode(TimelineStacks.self, from: snapshot.auxiliary))
      }
      return timeline
    } catch {
      return skip("it does not decode as \(State.self): \(error)")
    }
  }

  /// Opens an existing log: newest usable snapshot, then replay of the entries after it.
  @inlinable
  func recover() throws(ChronicleError) -> Recovered<State> {
    let start = ContinuousClock.now
    let head: ChainAnchor
    do { head = try log.head() } catch { throw ChronicleError(error) }
    var warnings: [String] = []
    var (timeline, snapshot) = try base(atOrBefore: head.seq, warnings: &warnings)
    let replayed = try fold(&timeline, through: head.seq)
    return Recovered(
      timeline: timeline,
      report: RecoveryReport(
        snapshotSeq: snapshot, entriesReplayed: replayed, lastSeq: head.seq, duration: ContinuousClock.now - start,
        warnings: warnings))
  }
}

/// A migration could not turn an old entry into a current action.
struct MigrationError: Error, CustomStringConvertible {
  var message: String
  var description: String { message }
}

/// Timelines at some sequence numbers, so that stepping through history does not refold from a snapshot each time.
@usableFromInline struct KeyframeCache<State> {
  /// Keyframes are kept at multiples of this sequence number.
  @usableFromInline static var interval: UInt64 { 128 }
  static var capacity: Int { 64 }

  private var frames: [UInt64: Timeline<State>] = [:]
  private var order: [UInt64] = []

  func best(atOrBefore seq: UInt64) -> Timeline<State>? {
    var best: Timeline<State>?
    for (key, frame) in frames where key <= seq && key > (best?.seq ?? 0) { best = frame }
    return best
  }

  @usableFromInline
  mutating func insert(_ timeline: Timeline<State>) {
    if frames.updateValue(timeline, forKey: timeline.seq) == nil { order.append(timeline.seq) }
    if order.count > Self.capacity { frames[order.removeFirst()] = nil }
  }

  /// Forgets everything (after the log was cut or rewritten).
  mutating func removeAll() {
    frames.removeAll()
    order.removeAll()
  }
}

/// The keyframe cache shared by a store and its replayer.
@usableFromInline final class Keyframes<State: Sendable>: Sendable {
  @usableFromInline let cache = Mutex(KeyframeCache<State>())

  @usableFromInline init() {}
}

