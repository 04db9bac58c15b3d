import ChronicleLog
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The store: current state, the only way to change it (`send`), and the
/// durable log of every accepted action behind it.
///
/// ```swift
/// let store = try Store(initialState: Counter.State(), reducer: Counter(),
///                       log: .directory(url),
///                       options: StoreOptions(durability: .normal, snapshotEvery: 1_000),
///                       validators: [Validator("never below zero") { $0.count >= 0 }])
/// let seq = try store.send(.increment)   // committed before it returns
/// print(store.state.count)
/// try store.close()
/// ```
///
/// Write path of `send`: reduce a copy of the state → run the validators →
/// append the entry and commit → publish the new state to observers → run
/// middleware → start effects. A rejected or failed send changes nothing and
/// publishes nothing; no observer ever sees a state whose entry is not committed.
///
/// `Store` is `Sendable`: `send` may be called from any thread or task.
/// Entries get gapless sequence numbers in the order sends arrive. Concurrent
/// sends share commits (group commit: one transaction, and with `.full` one
/// sync, for all of them); each still returns only once its own entry is
/// committed, and a rejected action fails alone. `try await send(_:)` suspends
/// instead of blocking the thread while the commit happens. Actions sent
/// while another is being published (by an observer, middleware or effect) are
/// queued and published after it, never interleaved.
public final class Store<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  /// The options the store was opened with.
  public let options: StoreOptions
  /// What opening the log did: snapshot used, entries replayed, time taken, warnings.
  public let recovery: RecoveryReport

  @usableFromInline let log: ActionLog
  @usableFromInline let reducer: AnyReducer<State, Action>
  @usableFromInline let validators: [Validator<State>]
  @usableFromInline let middleware: [any Middleware<State, Action>]

  @usableFromInline struct Writer: Sendable {
    @usableFromInline var cursor: UndoCursor<State>
    @usableFromInline var lastSnapshotSeq: UInt64
    /// The entry at which the last periodic snapshot failed (0: none failed):
    /// the next attempt waits for another `snapshotEvery` entries after it.
    var failedSnapshotSeq: UInt64 = 0
    /// The size of the newest checkpoint the store signed; `nil` until it signs one (`close()`
    /// then reads the log's newest, rather than every open paying for it).
    var lastCheckpointSeq: UInt64?
    @usableFromInline var isClosed = false
    @usableFromInline var groupDepth = 0
    @usableFromInline var groupHasSteps = false
    @usableFromInline var namer = ActionNamer<Action>()
    /// Group commit: sends staged for the next commit, in arrival order.
    @usableFromInline var staged: [Staged] = []
    /// The state and head after every staged send and the one being committed; `nil` when there are none.
    @usableFromInline var tip: (state: State, seq: UInt64)?

    init(cursor: UndoCursor<State>, lastSnapshotSeq: UInt64) {
      self.cursor = cursor
      self.lastSnapshotSeq = lastSnapshotSeq
    }
  }

  /// What reducing, validating and encoding a send made, before it is committed.
  @usableFromInline struct Prepared: Sendable {
    @usableFromInline var entries: [NewEntry]
    /// Each action's flags, in order.
    @usableFromInline var flags: [EntryFlags]
    /// The state before each action that keeps it for undo, by the action's offset, ascending: a few
    /// of a batch's actions, kept apart so that the many without one cost nothing to free.
    @usableFromInline var olds: [(offset: Int, state: State)]
    @usableFromInline var publications: [Publication]
    /// The state after the last action.
    @usableFromInline var state: State
    /// The writer's `groupHasSteps` after the send.
    @usableFromInline var groupHasSteps: Bool

    @usableFromInline
    init(
      entries: [NewEntry], flags: [EntryFlags], olds: [(offset: Int, state: State)], publications: [Publication],
      state: State, groupHasSteps: Bool
    ) {
      self.entries = entries
      self.flags = flags
      self.olds = olds
      self.publications = publications
      self.state = state
      self.groupHasSteps = groupHasSteps
    }

    /// Records each action in `cursor`, the first at `firstSeq`.
    @inlinable
    func record(in cursor: inout UndoCursor<State>, from firstSeq: UInt64, undoDepth: Int) {
      var nextOld = olds.startIndex
      for (offset, flags) in flags.enumerated() {
        var old: State?
        if nextOld < olds.endIndex, olds[nextOld].offset == offset {
          old = olds[nextOld].state
          nextOld += 1
        }
        cursor.recordAction(seq: firstSeq + UInt64(offset), flags: flags, undoDepth: undoDepth, old: old)
      }
    }
  }

  /// A send staged for the next group commit.
  @usableFromInline struct Staged: Sendable {
    @usableFromInline var prepared: Prepared
    /// The sequence number of its first entry.
    @usableFromInline var firstSeq: UInt64
    /// The writer's `groupHasSteps` before it was staged (restored when its commit fails).
    @usableFromInline var groupHadSteps: Bool
    @usableFromInline var ticket: CommitTicket

    @usableFromInline
    init(prepared: Prepared, firstSeq: UInt64, groupHadSteps: Bool, ticket: CommitTicket) {
      self.prepared = prepared
      self.firstSeq = firstSeq
      self.groupHadSteps = groupHadSteps
      self.ticket = ticket
    }

    /// Its sequence numbers.
    @usableFromInline var range: ClosedRange<UInt64> { firstSeq...(firstSeq + UInt64(prepared.entries.count) - 1) }
  }

  /// A send queued for the thread that leads the commits (``leadCommits(_:)``).
  @usableFromInline struct Request: Sendable {
    @usableFromInline var actions: [Action]
    @usableFromInline var metadata: [String: String]
    @usableFromInline var fromEffect: Bool
    @usableFromInline var ticket: CommitTicket
    /// Whether an async send (`try await send`) made it: no thread waits on its ticket, so the lead
    /// is handed to it on ``committer``.
    @usableFromInline var isAsync: Bool

    @usableFromInline
    init(actions: [Action], metadata: [String: String], fromEffect: Bool, ticket: CommitTicket, isAsync: Bool = false) {
      self.actions = actions
      self.metadata = metadata
      self.fromEffect = fromEffect
      self.ticket = ticket
      self.isAsync = isAsync
    }
  }

  /// The sends queued for the thread that leads the commits, in arrival order, and whether a thread
  /// leads them.
  @usableFromInline struct Pending: Sendable {
    @usableFromInline var requests: [Request] = []
    @usableFromInline var isLeading = false
    /// After a `.full` round that answered other senders: how many sends the next round waits for
    /// (those queued then, and one per sender answered), and until when.
    @usableFromInline var awaited: (count: Int, until: ContinuousClock.Instant)?

    @usableFromInline init() {}

    /// Whether no send waits and no thread leads: a `.normal` send may commit in place.
    @inlinable var isIdle: Bool { requests.isEmpty && !isLeading }

    /// Queues `request`; returns whether its sender leads the commits now (none did).
    @inlinable mutating func enqueue(_ request: Request) -> Bool {
      requests.append(request)
      defer { isLeading = true }
      return !isLeading
    }
  }

  /// A committed change waiting to be delivered. `old` and `new` are `nil`
  /// when nothing observed transitions at commit time (no subscriber, commit
  /// observer or middleware): a batch then reduces in place instead of copying
  /// the state once per action.
  @usableFromInline struct Publication: Sendable {
    @usableFromInline var seq: UInt64
    @usableFromInline var action: Action?
    @usableFromInline var isFromEffect = false
    @usableFromInline var old: State?
    @usableFromInline var new: State?
    @usableFromInline var effect: Effect<Action>

    @usableFromInline
    init(seq: UInt64, action: Action?, isFromEffect: Bool = false, old: State?, new: State?, effect: Effect<Action>) {
      self.seq = seq
      self.action = action
      self.isFromEffect = isFromEffect
      self.old = old
      self.new = new
      self.effect = effect
    }
  }

  @usableFromInline struct Shared {
    @usableFromInline var state: State
    @usableFromInline var canUndo = false
    @usableFromInline var canRedo = false
    @usableFromInline var outbox: [Publication] = []
    /// Whether the state changed since the last drain (an observation is due), publications or not.
    @usableFromInline var hasChanged = false
    @usableFromInline var isDraining = false
    @usableFromInline typealias Subscriber = (id: Int, observer: @Sendable (State, State) -> Void)
    @usableFromInline typealias CommitObserver = (id: Int, observer: @Sendable (Commit<State, Action>) -> Void)
    /// In subscription order (ids only grow).
    @usableFromInline var subscribers: [(id: Int, observer: @Sendable (State, State) -> Void)] = []
    @usableFromInline var commitObservers: [(id: Int, observer: @Sendable (Commit<State, Action>) -> Void)] = []
    var nextID = 0
  }

  @usableFromInline let writer: Mutex<Writer>
  @usableFromInline let shared: Mutex<Shared>
  @usableFromInline let replayer: Replayer<State, Action>
  /// Held by the thread committing staged sends (group commit) and by writes that need every
  /// staged send committed first. Taken before ``writer``, never while holding it.
  @usableFromInline let commitLock = Mutex(())
  /// Sends waiting for the thread that leads the commits. Taken alone, or inside ``writer``.
  @usableFromInline let pending = Mutex(Pending())
  /// Signalled for each send queued while the leader waits for returning senders
  /// (``awaitReturningSenders()``). A signal left over from a round that stopped waiting only makes a
  /// later wait count once more.
  @usableFromInline let arrivals = DispatchSemaphore(value: 0)
  /// The thread that leads the commits for async `.full` sends, so that no task blocks while it syncs.
  @usableFromInline let committer = DispatchQueue(label: "Chronicle.Store.commit")
  let observation = makeObservation()
  /// The `.run` effects started and not yet ended.
  let effects = EffectTasks()
  /// ``defaultMetadata``. Taken alone, or inside ``writer``.
  @usableFromInline let defaults = Mutex<[String: String]>([:])

  /// Opens the store: creates the log, or recovers from an existing one.
  ///
  /// - Parameters:
  ///   - initialState: the state before the first entry.
  ///   - reducer: the app's rules.
  ///   - location: where the log lives (the `log:` argument); `.inMemory` by default.
  ///   - options: durability, snapshots, codec, schema versions, migrations, undo depth.
  ///   - validators: rules every new state must satisfy.
  ///   - middleware: code that sees every committed action.
  /// - Throws: ``ChronicleError/logLocked(path:)`` when another writer has the log,
  ///   ``ChronicleError/undecodableEntry(seq:type:underlying:)`` when an entry
  ///   cannot be decoded (nothing is written then), ``ChronicleError/log(_:)`` otherwise.
  @inlinable
  public convenience init<R: Reducer>(
    initialState: State, reducer: R, log location: LogLocation = .inMemory, options: StoreOptions = StoreOptions(),
    validators: [Validator<State>] = [], middleware: [any Middleware<State, Action>] = []
  ) throws where R.State == State, R.Action == Action {
    if let type = options.undoableActionType, type.id != ObjectIdentifier(Action.self) {
      throw ChronicleError.unsupported(
        "StoreOptions.isUndoable takes \(type.name) but this store's actions are \(Action.self)")
    }
    // Recovery runs here, in the caller's module, so that its per-entry
    // path is specialized for the app's types (see `Replayer`).
    let (log, derivedAppID) = try Self.openLog(location, options: options)
    let replayer = Replayer(
      log: log, initialState: initialState, reducer: AnyReducer(reducer), options: options, keyframes: Keyframes())
    var recovered: Recovered<State>
    do {
      recovered = try replayer.recover()
      if let derivedAppID {
        recovered.report.warnings.append(
          "StoreOptions.appID is empty: the new log records the app identifier \"\(derivedAppID)\" (its "
            + "directory's name); pass StoreOptions(appID:) to choose it")
      }
      try Self.recordSchemaVersion(of: replayer.log, options: options)
    } catch {
      try? replayer.log.close()
      throw ChronicleError(error)
    }
    self.init(replayer: replayer, recovered: recovered, validators: validators, middleware: middleware)
  }

  /// The store over a log `replayer` has recovered.
  @usableFromInline
  init(
    replayer: Replayer<State, Action>, recovered: Recovered<State>, validators: [Validator<State>],
    middleware: [any Middleware<State, Action>]
  ) {
    self.replayer = replayer
    options = replayer.options
    reducer = replayer.reducer
    log = replayer.log
    self.validators = validators
    self.middleware = middleware
    recovery = recovered.report
    writer = Mutex(Writer(cursor: recovered.cursor, lastSnapshotSeq: recovered.report.snapshotSeq ?? 0))
    shared = Mutex(
      Shared(
        state: recovered.cursor.state, canUndo: !recovered.cursor.undo.isEmpty,
        canRedo: !recovered.cursor.redo.isEmpty))
  }

  /// Opens or creates the log at `location`, and the app identifier it derived for a new
  /// directory log when `options.appID` is empty (see ``StoreOptions/appID``).
  @usableFromInline
  static func openLog(_ location: LogLocation, options: StoreOptions) throws(ChronicleError)
    -> (log: ActionLog, derivedAppID: String?)
  {
    var logOptions = ActionLog.Options(
      durability: options.durability, flushInterval: options.flushInterval, appID: options.appID,
      schemaVersion: options.schemaVersion, maxLogSize: options.maxLogSize,
      keyRing: options.keyRing)
    do {
      switch location {
      case .directory(let url):
        let derived = try derivedAppID(for: url, options: options)
        if let derived { logOptions.appID = derived }
        return (try ActionLog(directory: url, access: .readWrite, options: logOptions), derived)
      case .inMemory:
        return (try ActionLog.temporary(options: logOptions), nil)
      }
    } catch let error as ChronicleError {
      throw error
    } catch {
      throw ChronicleError(error)
    }
  }

  /// The app identifier a new log at `url` records when `options.appID` is empty: the directory's
  /// name without its extension. `nil` when the app gave one or the log exists already.
  static func derivedAppID(for url: URL, options: StoreOptions) throws(ChronicleError) -> String? {
    guard options.appID.isEmpty,
      !FileManager.default.fileExists(atPath: url.appendingPathComponent("data.mdb").path)
    else { return nil }
    let name = url.standardizedFileURL.lastPathComponent
    let stem = (name as NSString).deletingPathExtension
    let derived = stem.isEmpty ? name : stem
    guard !derived.isEmpty, derived != "/" else {
      throw .unsupported(
        "the log directory \(url.path) has no name to use as the app identifier: pass StoreOptions(appID:)")
    }
    return derived
  }

  /// Records in the log's meta that entries of `options.schemaVersion` follow, if the log's is older.
  @usableFromInline
  static func recordSchemaVersion(of log: ActionLog, options: StoreOptions) throws {
    if try log.meta().schemaVersion < options.schemaVersion { try log.setSchemaVersion(options.schemaVersion) }
  }

  // MARK: - Reading

  /// The current state: the fold of every committed entry. Read without `await`.
  public var state: State {
    observationAccess()
    return shared.withLock { $0.state }
  }

  /// Metadata written with every entry the store appends from now on: sends, the actions
  /// effects send back, and ``undo(metadata:)``, ``redo(metadata:)`` and ``restore(to:metadata:)``.
  ///
  /// Set it once the app knows who is working (after sign-in) instead of passing the same
  /// pairs to every call. A call's own metadata is merged over it: for a key in both, the
  /// call's value wins.
  ///
  /// ```swift
  /// store.defaultMetadata = ["user": "alice", "device": "ipad-7"]
  /// try store.send(.approve(id: 42), metadata: ["reason": "within budget"])
  /// // entry metadata: device, reason, user
  /// try store.undo(metadata: ["user": "bob"])
  /// // entry metadata: device, user = bob
  /// ```
  public var defaultMetadata: [String: String] {
    get { defaults.withLock { $0 } }
    set { defaults.withLock { $0 = newValue } }
  }

  /// `metadata` over ``defaultMetadata``: for a key in both, `metadata`'s value.
  @inlinable
  func metadata(over metadata: [String: String]) -> [String: String] {
    let defaults = defaults.withLock { $0 }
    if defaults.isEmpty { return metadata }
    return defaults.merging(metadata) { _, own in own }
  }

  /// The sequence number of the last entry (0 for an empty log).
  public var lastSeq: UInt64 { writer.withLock { $0.cursor.seq } }

  /// Where the log lives on disk (a temporary directory for `.inMemory`).
  public var logPath: String { log.path }

  // MARK: - Sending

  /// Sends an action: reduces, validates, commits, publishes, runs middleware and effects.
  ///
  /// - Parameters:
  ///   - action: the action to reduce and log.
  ///   - metadata: audit data stored with the entry (who, why, …).
  /// - Returns: the entry's sequence number, durable (per ``StoreOptions/durability``) when this returns.
  /// - Throws: ``ChronicleError/rejected(reason:)`` if a validator refuses the
  ///   new state, ``ChronicleError/closed``, or the log's error. Nothing changes then.
  @inlinable @discardableResult
  public func send(_ action: Action, metadata: [String: String] = [:]) throws -> UInt64 {
    try commit(CollectionOfOne(action), metadata: metadata, fromEffect: false).lowerBound
  }

  /// Sends several actions as one transaction: all are committed, or none.
  ///
  /// Each intermediate state must satisfy the validators: the batch fails at its first bad action,
  /// whether rejected or not encodable.
  ///
  /// - Throws: ``ChronicleError/emptyBatch`` when `actions` is empty (nothing is
  ///   logged), or any error ``send(_:metadata:)-9aphm`` throws. Nothing changes then.
  @inlinable @discardableResult
  public func send(contentsOf actions: some Collection<Action>, metadata: [String: String] = [:]) throws
    -> ClosedRange<UInt64>
  {
    guard !actions.isEmpty else { throw ChronicleError.emptyBatch }
    return try commit(actions, metadata: metadata, fromEffect: false)
  }

  /// The write path of every send. Inlinable, so that it is specialized for the
  /// app's state and action types: unspecialized generic code spends a third of
  /// a send looking up generic metadata.
  ///
  /// A send commits in place when the writer is free, no other send waits and the commit does not
  /// wait for the disk (`.normal`). Otherwise it is queued for the thread that leads the commits
  /// (``leadCommits(_:)``), which commits the queued sends together (group commit: one transaction,
  /// and with `.full` one sync, per round), or it leads them itself.
  @inlinable
  func commit(_ actions: some Collection<Action>, metadata: [String: String], fromEffect: Bool) throws(ChronicleError)
    -> ClosedRange<UInt64>
  {
    var backgroundFailures: [ChronicleError] = []
    // A `.full` commit always goes through the queue: in place it would hold the writer lock while
    // it syncs, and block the async senders that stage meanwhile.
    if options.durability == .normal, pending.withLock({ $0.isIdle }),
      case let range?? = try writer.withLockIfAvailable({ writer throws(ChronicleError) -> ClosedRange<UInt64>? in
        guard !writer.isClosed else { throw .closed }
        // Re-checked under the writer lock: a send queued since then arrived first.
        guard writer.tip == nil, pending.withLock({ $0.isIdle }) else { return nil }
        return try commitInPlace(actions, metadata: metadata, fromEffect: fromEffect, &writer, &backgroundFailures)
      })
    {
      if !backgroundFailures.isEmpty { reportBackgroundErrors(backgroundFailures) }
      drain()
      return range
    }
    let ticket = CommitTicket()
    let request = Request(actions: Array(actions), metadata: metadata, fromEffect: fromEffect, ticket: ticket)
    let leads = queue(request)
    let failures = leads || ticket.waitForCommit() ? leadCommits(ticket) : []
    if !failures.isEmpty { reportBackgroundErrors(failures) }
    drain()
    return try ticket.result()
  }

  /// Commits `actions` at once, with the writer lock held and nothing staged.
  @inlinable
  func commitInPlace(
    _ actions: some Collection<Action>, metadata: [String: String], fromEffect: Bool, _ writer: inout Writer,
    _ backgroundFailures: inout [ChronicleError]
  ) throws(ChronicleError) -> ClosedRange<UInt64> {
    let firstSeq = writer.cursor.seq + 1
    let prepared = try prepare(actions, metadata: metadata, fromEffect: fromEffect, on: writer.cursor.state, at: firstSeq, &writer)
    let range: ClosedRange<UInt64>
    do { range = try log.append(contentsOf: prepared.entries) } catch { throw ChronicleError(error) }
    prepared.record(in: &writer.cursor, from: firstSeq, undoDepth: options.undoDepth)
    writer.cursor.state = prepared.state
    writer.groupHasSteps = prepared.groupHasSteps
    publish(writer.cursor, prepared.publications)
    backgroundFailures = backgroundWorkIfDue(&writer, from: firstSeq - 1)
    return range
  }

  /// Reduces, validates and encodes `actions` on top of `base` (whose head is `firstSeq - 1`), without
  /// changing the writer: the entries to append, the undo steps and publications they make, the new state.
  /// Called with the writer lock held.
  @inlinable
  func prepare(
    _ actions: some Collection<Action>, metadata: [String: String], fromEffect: Bool, on base: State, at firstSeq: UInt64,
    _ writer: inout Writer
  ) throws(ChronicleError) -> Prepared {
    // Observers register under the writer lock: one registered before this
    // commit is seen here and gets every transition of it.
    let observed = !middleware.isEmpty || shared.withLock { !$0.subscribers.isEmpty || !$0.commitObservers.isEmpty }
    // The cursor changes only once the entries are committed, and then in
    // place (copying it would copy its undo stack on every send).
    var state = base
    // A batch is one undo step, like an undo group (and part of the group it is sent in).
    let grouped = writer.groupDepth > 0 || actions.count > 1
    var groupHasSteps = writer.groupDepth > 0 && writer.groupHasSteps
    var entries: [NewEntry] = []
    var publications: [Publication] = []
    var allFlags: [EntryFlags] = []
    var olds: [(offset: Int, state: State)] = []
    entries.reserveCapacity(actions.count)
    if observed { publications.reserveCapacity(actions.count) }
    allFlags.reserveCapacity(actions.count)
    // Only the newest few undo steps keep their state (see `UndoCursor.retainedStates`).
    let keepsOldFrom = actions.count - UndoCursor<State>.retainedStates
    let metadata = self.metadata(over: metadata)
    func entry(_ action: @autoclosure () -> Action, _ flags: EntryFlags, _ payload: [UInt8]) -> NewEntry {
      NewEntry(
        flags: flags, typeName: writer.namer.name(of: action(), payload: payload, codec: options.codec),
        metadata: metadata, codec: options.codec, schemaVersion: options.schemaVersion, payload: payload)
    }
    for action in actions {
      let index = allFlags.count
      var flags: EntryFlags = []
      if fromEffect { flags.formUnion([.fromEffect, .notUndoable]) }
      if let isUndoable = options.isUndoable, !isUndoable(action) { flags.insert(.notUndoable) }
      if grouped, !flags.contains(.notUndoable) {
        if groupHasSteps { flags.insert(.continuesGroup) }
        groupHasSteps = true
      }
      // The state before an action that starts an undo step is the step's state.
      let startsStep = !flags.contains(.notUndoable) && !flags.contains(.continuesGroup)
      let old: State? = observed || index >= keepsOldFrom || (grouped && startsStep) ? state : nil
      let effect = reducer.reduce(into: &state, action: action)
      for validator in validators where !validator.isValid(state) {
        throw .rejected(reason: validator.reason)
      }
      let payload: [UInt8]
      do {
        payload = try options.codec.encode(action)
      } catch {
        throw .unencodable(type: "\(Action.self)", underlying: error)
      }
      entries.append(entry(action, flags, payload))
      allFlags.append(flags)
      if let old { olds.append((index, old)) }
      // An action nothing observes and whose effect is none has nothing to deliver.
      if observed || !effect.isNone {
        publications.append(
          Publication(
            seq: firstSeq + UInt64(index), action: action, isFromEffect: fromEffect, old: observed ? old : nil,
            new: observed ? state : nil, effect: effect))
      }
    }
    return Prepared(
      entries: entries, flags: allFlags, olds: olds, publications: publications, state: state,
      groupHasSteps: groupHasSteps)
  }

  // MARK: - Group commit

  /// Stages `actions` for the next group commit, with the writer lock held: reduces and validates
  /// them on the state after every send staged or being committed before them, and gives them the
  /// sequence numbers after those. A rejected or unencodable action throws here and stages nothing.
  /// `ticket` is resolved once the commit happened or failed.
  @inlinable
  func stage(
    _ actions: some Collection<Action>, metadata: [String: String], fromEffect: Bool, ticket: CommitTicket,
    _ writer: inout Writer
  ) throws(ChronicleError) {
    guard !writer.isClosed else { throw .closed }
    let head = writer.tip ?? (writer.cursor.state, writer.cursor.seq)
    let groupHadSteps = writer.groupHasSteps
    let prepared = try prepare(actions, metadata: metadata, fromEffect: fromEffect, on: head.state, at: head.seq + 1, &writer)
    writer.tip = (prepared.state, head.seq + UInt64(prepared.entries.count))
    // Later sends of an undo group continue it, whether or not this one is committed yet.
    writer.groupHasSteps = prepared.groupHasSteps
    writer.staged.append(Staged(prepared: prepared, firstSeq: head.seq + 1, groupHadSteps: groupHadSteps, ticket: ticket))
  }

  // MARK: - Leading commits

  /// Rounds of commits a leader runs once its own send is committed, before it hands the lead to the
  /// thread of the oldest waiting send and returns: fewer with `.full`, whose rounds each wait for the disk.
  @inlinable
  var leaderRounds: Int { options.durability == .full ? 1 : 32 }

  /// Commits the sends queued in ``pending``, for the thread that leads the commits: in rounds, each
  /// of which stages every send queued so far (in arrival order, each reduced and validated on the
  /// state the sends before it made; a rejected one fails alone) and commits them in one transaction.
  /// The other senders wait on their tickets meanwhile (``CommitTicket/waitForCommit()``)
  /// instead of contending for a lock, whose waiters would each be woken in turn. Returns when no
  /// send is queued, or after ``leaderRounds`` rounds once `own` is committed, handing the lead to
  /// the oldest queued send's thread (``committer`` for an async send), so that no caller commits
  /// for others for long. Returns what failed in background work, for the caller to report once
  /// the locks are released.
  ///
  /// With `.full`, a round that answered other senders makes the next round wait a little for their
  /// next sends (``Pending/awaited``): without it, senders that send in a loop split into two groups
  /// that take turns, each committing while the other returns, at half the size.
  @inlinable
  func leadCommits(_ own: CommitTicket) -> [ChronicleError] {
    var failures: [ChronicleError] = []
    var rounds = 0
    while true {
      if rounds >= leaderRounds, own.isResolved {
        let heir = pending.withLock { pending -> Request? in
          if pending.requests.isEmpty { pending.isLeading = false }
          return pending.requests.first
        }
        if let heir {
          if heir.isAsync { leadOnCommitter(heir.ticket) } else { heir.ticket.handCommit() }
        }
        return failures
      }
      if options.durability == .full { awaitReturningSenders() }
      let batch = pending.withLock { pending -> [Request] in
        defer { pending.requests = [] }
        if pending.requests.isEmpty { pending.isLeading = false }
        return pending.requests
      }
      if batch.isEmpty { return failures }
      let start = ContinuousClock.now
      failures += commitLock.withLock { _ in
        writer.withLock { writer in
          for request in batch {
            do throws(ChronicleError) {
              try stage(
                request.actions, metadata: request.metadata, fromEffect: request.fromEffect, ticket: request.ticket,
                &writer)
            } catch {
              request.ticket.resolve(.failure(error))
            }
          }
        }
        return commitStaged {
          // The senders about to be answered may send again at once (a loop of sends), this thread
          // too if it hands the lead on after this round: the next round waits for them a quarter
          // of this round's time at most.
          let staysLeading = rounds + 1 < leaderRounds && batch.contains { $0.ticket === own }
          let answered = batch.count - (staysLeading ? 1 : 0)
          guard options.durability == .full, answered > 0 else { return }
          let now = ContinuousClock.now
          let until = now + (now - start) / 4
          pending.withLock { $0.awaited = ($0.requests.count + answered, until) }
        }
      }
      rounds += 1
    }
  }

  /// Sleeps until as many sends are queued as ``Pending/awaited`` says or its time is up, then
  /// clears it. A `.full` round costs a sync (hundreds of microseconds); the senders it answered
  /// need a few tens to wake up and send again. Each send queued meanwhile wakes it
  /// (``queue(_:)``) to count again.
  @inlinable
  func awaitReturningSenders() {
    guard let (count, until) = pending.withLock({ $0.awaited }) else { return }
    while pending.withLock({ $0.requests.count }) < count {
      let left = ContinuousClock.now.duration(to: until)
      guard left > .zero else { break }
      let (seconds, attoseconds) = left.components
      let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
      if arrivals.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .timedOut { break }
    }
    pending.withLock { $0.awaited = nil }
  }

  /// Queues `request` for the thread that leads the commits; returns whether its sender leads them
  /// (none did). Wakes a leader waiting for returning senders (``awaitReturningSenders()``).
  @inlinable
  func queue(_ request: Request) -> Bool {
    let (leads, awaited) = pending.withLock { ($0.enqueue(request), $0.awaited != nil) }
    if awaited { arrivals.signal() }
    return leads
  }

  /// Commits every staged send in one transaction (one sync with `.full`), then moves the cursor,
  /// publishes and resolves each send's ticket, in staging order. When the transaction fails, every
  /// staged send fails with its error (those staged meanwhile too: they were reduced on states that
  /// were never committed) and nothing changes. Called with ``commitLock`` held; returns what failed
  /// in background work, for the caller to report once the locks are released (the handler may send).
  /// `beforeResolving` runs once the transaction succeeded, before the first ticket is resolved.
  /// Inlinable, so that it is specialized: every round of queued sends runs it.
  @inlinable
  func commitStaged(beforeResolving: () -> Void = {}) -> [ChronicleError] {
    let batch = writer.withLock { writer in
      defer { writer.staged.removeAll() }
      return writer.staged
    }
    guard let first = batch.first, let last = batch.last else { return [] }
    var entries: [NewEntry] = []
    entries.reserveCapacity(batch.reduce(0) { $0 + $1.prepared.entries.count })
    for send in batch { entries.append(contentsOf: send.prepared.entries) }
    do {
      _ = try log.append(contentsOf: entries)
    } catch {
      let failure = ChronicleError(error)
      let doomed = writer.withLock { writer in
        defer {
          writer.staged.removeAll()
          writer.tip = nil
          writer.groupHasSteps = first.groupHadSteps
        }
        return writer.staged
      }
      for send in batch + doomed { send.ticket.resolve(.failure(failure)) }
      return []
    }
    let failures = writer.withLock { writer in
      var publications: [Publication] = []
      publications.reserveCapacity(entries.count)
      for send in batch {
        send.prepared.record(in: &writer.cursor, from: send.firstSeq, undoDepth: options.undoDepth)
        publications.append(contentsOf: send.prepared.publications)
      }
      writer.cursor.state = last.prepared.state
      if writer.staged.isEmpty { writer.tip = nil }
      publish(writer.cursor, publications)
      return backgroundWorkIfDue(&writer, from: first.firstSeq - 1)
    }
    beforeResolving()
    for send in batch { send.ticket.resolve(.success(send.range)) }
    return failures
  }

  /// Runs `body` under the writer lock once no send is staged or being committed (group commit
  /// commits them first), holding ``commitLock`` so that none is committed meanwhile. For writes
  /// that use the cursor directly: undo, redo, restore, checkpoints, closing, new observers.
  /// Returns `body`'s result and what failed in background work, for the caller to report.
  func withCommittedWriter<R: Sendable, E: Error>(_ body: (inout Writer) throws(E) -> R) throws(E) -> (R, [ChronicleError]) {
    try commitLock.withLock { _ throws(E) -> (R, [ChronicleError]) in
      var failures: [ChronicleError] = []
      while true {
        failures += commitStaged()
        var result: R?
        try writer.withLock { writer throws(E) in
          guard writer.staged.isEmpty else { return }
          result = try body(&writer)
        }
        if let result { return (result, failures) }
      }
    }
  }

  // MARK: - Async sending

  /// Sends an action, suspending (instead of blocking the thread) while its entry is committed.
  ///
  /// ```swift
  /// let seq = try await store.send(.increment)   // durable when this returns
  /// ```
  ///
  /// With `.full` durability the commit and its sync run on a thread of the store's own, together with
  /// the entries other senders staged meanwhile (group commit); the task suspends until the entry is
  /// durable. With `.normal` the commit does not wait for the disk and happens in place.
  /// Use it from the main actor and from tasks of the cooperative pool.
  ///
  /// - Parameters:
  ///   - action: the action to reduce and log.
  ///   - metadata: audit data stored with the entry (who, why, …).
  /// - Returns: the entry's sequence number, durable (per ``StoreOptions/durability``) when this returns.
  /// - Throws: what ``send(_:metadata:)-9aphm`` throws. Nothing changes then.
  @inlinable @discardableResult
  public func send(_ action: Action, metadata: [String: String] = [:]) async throws -> UInt64 {
    try await commitSuspending(CollectionOfOne(action), metadata: metadata).lowerBound
  }

  /// Sends several actions as one transaction (all are committed, or none), suspending instead of
  /// blocking the thread while they are committed. See ``send(_:metadata:)-4cl6u``.
  ///
  /// - Throws: what ``send(contentsOf:metadata:)`` throws. Nothing changes then.
  @inlinable @discardableResult
  public func send(contentsOf actions: some Collection<Action> & Sendable, metadata: [String: String] = [:]) async throws
    -> ClosedRange<UInt64>
  {
    guard !actions.isEmpty else { throw ChronicleError.emptyBatch }
    return try await commitSuspending(actions, metadata: metadata)
  }

  /// The async write path. With `.full` the send is queued like a synchronous one (``leadCommits(_:)``),
  /// and when no thread leads the commits, ``committer`` does: the task suspends meanwhile.
  @inlinable
  func commitSuspending(_ actions: some Collection<Action>, metadata: [String: String]) async throws
    -> ClosedRange<UInt64>
  {
    // `.normal` commits never wait for the disk (the background flush syncs outside any lock).
    guard options.durability == .full else { return try commit(actions, metadata: metadata, fromEffect: false) }
    let ticket = CommitTicket()
    let request = Request(actions: Array(actions), metadata: metadata, fromEffect: false, ticket: ticket, isAsync: true)
    let range = try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<ClosedRange<UInt64>, any Error>) in
      ticket.whenResolved(continuation)
      if queue(request) { leadOnCommitter(ticket) }
    }
    drain()
    return range
  }

  /// Leads the commits on ``committer`` for the async send of `ticket` (``leadCommits(_:)``). What
  /// failed in background work (rare: a snapshot or checkpoint that could not be written) is
  /// reported on a thread started for it, which ends with the report: the handler may send, and a
  /// send made on ``committer`` could wait for a lead handed to ``committer`` itself.
  @inlinable
  func leadOnCommitter(_ ticket: CommitTicket) {
    committer.async { [self] in
      let failures = leadCommits(ticket)
      guard !failures.isEmpty else { return }
      let reporter = Thread { [self] in reportBackgroundErrors(failures) }
      reporter.name = "Chronicle background error report"
      reporter.start()
    }
  }

  /// Hands a committed cursor to readers and queues its publications. Called with the writer lock held.
  @inlinable
  func publish(_ cursor: UndoCursor<State>, _ publications: [Publication]) {
    shared.withLock { shared in
      shared.state = cursor.state
      shared.canUndo = !cursor.undo.isEmpty
      shared.canRedo = !cursor.redo.isEmpty
      shared.outbox.append(contentsOf: publications)
      shared.hasChanged = true
    }
  }

  /// Delivers queued publications in order: observers, then middleware, then effects.
  /// One thread drains at a time; sends made meanwhile are delivered by it, after the current one.
  @inlinable
  func drain() {
    let owns = shared.withLock { shared in
      if shared.isDraining { return false }
      shared.isDraining = true
      return true
    }
    guard owns else { return }
    while true {
      // Take everything queued so far; what is sent meanwhile waits for the next round.
      let next = shared.withLock { shared -> ([Publication], [Shared.Subscriber], [Shared.CommitObserver])? in
        guard shared.hasChanged else {
          shared.isDraining = false
          return nil
        }
        shared.hasChanged = false
        defer { shared.outbox.removeAll(keepingCapacity: true) }
        return (shared.outbox, shared.subscribers, shared.commitObservers)
      }
      guard let (publications, subscribers, commitObservers) = next else { return }
      observationChanged()
      for publication in publications {
        // Without states, nothing observed transitions when this was committed.
        if let old = publication.old, let new = publication.new {
          if !commitObservers.isEmpty {
            let commit = Commit(
              seq: publication.seq, action: publication.action, isFromEffect: publication.isFromEffect, old: old,
              new: new)
            for entry in commitObservers { entry.observer(commit) }
          }
          for entry in subscribers { entry.observer(new, old) }
          if let action = publication.action {
            for middleware in middleware { start(middleware.run(state: new, action: action)) }
          }
        }
        if !publication.effect.isNone { start(publication.effect) }
      }
    }
  }

  // MARK: - Snapshots, checkpoints and closing

  /// Writes the periodic snapshot and signs the automatic checkpoint that are due after a commit
  /// that moved the head from `before`. Returns what failed, for the caller to report once the
  /// writer lock is released (the handler may send).
  @usableFromInline
  func backgroundWorkIfDue(_ writer: inout Writer, from before: UInt64) -> [ChronicleError] {
    var failures: [ChronicleError] = []
    if let failure = snapshotIfDue(&writer) { failures.append(failure) }
    if let failure = checkpointIfDue(&writer, from: before) { failures.append(failure) }
    return failures
  }

  /// Writes a periodic snapshot when one is due. Returns why it failed, for the
  /// caller to report once the writer lock is released (the handler may send).
  ///
  /// A failed snapshot changes nothing committed; it is retried after another
  /// `snapshotEvery` entries, not on every send.
  @usableFromInline
  func snapshotIfDue(_ writer: inout Writer) -> ChronicleError? {
    let every = UInt64(max(options.snapshotEvery, 0))
    guard every > 0, writer.cursor.seq >= max(writer.lastSnapshotSeq, writer.failedSnapshotSeq) + every
    else { return nil }
    do throws(ChronicleError) {
      try writeSnapshot(&writer)
      return nil
    } catch {
      writer.failedSnapshotSeq = writer.cursor.seq
      return .snapshotFailed(seq: writer.cursor.seq, underlying: error)
    }
  }

  /// Hands failures of background work to ``StoreOptions/onBackgroundError``, in order,
  /// or prints them to standard error when there is no handler.
  @usableFromInline
  func reportBackgroundErrors(_ errors: [ChronicleError]) {
    for error in errors {
      if let handler = options.onBackgroundError {
        handler(error)
      } else {
        FileHandle.standardError.write(Data("Chronicle: background error: \(error)\n".utf8))
      }
    }
  }

  /// Signs an automatic checkpoint when the commit that moved the head from `before` crossed a
  /// multiple of ``StoreOptions/checkpointEvery``. Returns why it failed, for the caller to
  /// report; the next attempt waits for the next multiple.
  func checkpointIfDue(_ writer: inout Writer, from before: UInt64) -> ChronicleError? {
    let every = UInt64(max(options.checkpointEvery, 0))
    guard every > 0, let signer = options.checkpointSigner, before / every < writer.cursor.seq / every else {
      return nil
    }
    do throws(ChronicleError) {
      try signCheckpoint(&writer, with: signer)
      return nil
    } catch {
      return error
    }
  }

  /// Signs and stores a checkpoint of the head now.
  @discardableResult
  func signCheckpoint(_ writer: inout Writer, with signer: NoteSigner) throws(ChronicleError) -> SignedNote {
    do {
      let note = try log.signCheckpoint(with: signer)
      writer.lastCheckpointSeq = writer.cursor.seq
      return note
    } catch {
      throw .checkpointFailed(seq: writer.cursor.seq, underlying: error)
    }
  }

  /// The tree size of the newest checkpoint `log` holds (0: none, or none readable).
  static func newestCheckpointSize(of log: ActionLog) -> UInt64 {
    guard let note = try? log.checkpoints().last, let checkpoint = try? Checkpoint(parsing: note.text) else {
      return 0
    }
    return checkpoint.size
  }

  /// Signs a checkpoint of the log's head now with ``StoreOptions/checkpointSigner``, stores it
  /// in the log (with every checkpoint it signed) and returns it.
  ///
  /// ```swift
  /// let note = try store.checkpoint()
  /// try Data(note.formatted).write(to: checkpointFile)   // publish it, or hand it to a witness
  /// ```
  ///
  /// - Throws: ``ChronicleError/noCheckpointSigner`` when the store has no signer,
  ///   ``ChronicleError/closed``, or ``ChronicleError/checkpointFailed(seq:underlying:)`` saying
  ///   why the checkpoint could not be signed or stored. Nothing is written then.
  @discardableResult
  public func checkpoint() throws -> SignedNote {
    guard let signer = options.checkpointSigner else { throw ChronicleError.noCheckpointSigner }
    let (note, failures) = try withCommittedWriter { writer throws(ChronicleError) -> SignedNote in
      guard !writer.isClosed else { throw .closed }
      return try signCheckpoint(&writer, with: signer)
    }
    if !failures.isEmpty { reportBackgroundErrors(failures) }
    drain()
    return note
  }

  func writeSnapshot(_ writer: inout Writer) throws(ChronicleError) {
    let cursor = writer.cursor
    guard cursor.seq > 0 else { return }
    let state: [UInt8]
    let stacks: [UInt8]
    do {
      state = try options.codec.encode(cursor.state)
      stacks = try options.codec.encode(cursor.stacks)
    } catch {
      throw .unencodable(type: "\(State.self)", underlying: error)
    }
    do {
      // A compacted log depends on the snapshot at its cut: never replace it
      // with one of another state schema, nor prune it (an older app version
      // that uses it must still open the log).
      let cut = try log.meta().anchor.seq
      if cursor.seq == cut, try log.snapshots().contains(where: { $0.seq == cut }) {
        writer.lastSnapshotSeq = cursor.seq
        return
      }
      try log.writeSnapshot(
        at: cursor.seq, state: state, codec: options.codec, schemaVersion: options.stateSchemaVersion,
        auxiliary: stacks)
      writer.lastSnapshotSeq = cursor.seq
      if let kept = options.snapshotsKept {
        let doomed = try log.snapshots().dropLast(max(kept, 1)).filter { cut == 0 || $0.seq != cut }
        for info in doomed { try log.deleteSnapshot(at: info.seq) }
      }
    } catch {
      throw ChronicleError(error)
    }
  }

  /// Syncs committed entries to disk now (with `.normal` durability).
  public func flush() throws {
    do { try log.sync() } catch { throw ChronicleError(error) }
  }

  /// Writes a snapshot (if anything happened since the last), signs a final checkpoint (with a
  /// ``StoreOptions/checkpointSigner``, if the head moved since the newest checkpoint), cancels
  /// running effects and closes the log. Later sends throw ``ChronicleError/closed``. Idempotent.
  ///
  /// - Throws: what writing the snapshot or signing the checkpoint threw (the log is closed
  ///   all the same; the entries are safe).
  ///
  /// A store released without `close()` loses nothing: every entry was
  /// committed by its `send`; the log is synced and unlocked when released, and
  /// the next open replays the entries after the last snapshot.
  public func close() throws {
    // Sends staged before closing are committed first.
    let (result, failures) = withCommittedWriter { writer -> Result<Void, ChronicleError> in
      guard !writer.isClosed else { return .success(()) }
      writer.isClosed = true
      var failure: ChronicleError?
      if writer.cursor.seq > writer.lastSnapshotSeq {
        do throws(ChronicleError) { try writeSnapshot(&writer) } catch { failure = error }
      }
      if let signer = options.checkpointSigner,
        writer.cursor.seq > writer.lastCheckpointSeq ?? Self.newestCheckpointSize(of: log)
      {
        do throws(ChronicleError) { _ = try signCheckpoint(&writer, with: signer) } catch {
          failure = failure ?? error
        }
      }
      do { try log.close() } catch { failure = failure ?? ChronicleError(error) }
      return failure.map { .failure($0) } ?? .success(())
    }
    effects.cancelAll()
    if !failures.isEmpty { reportBackgroundErrors(failures) }
    drain()
    try result.get()
  }
}
