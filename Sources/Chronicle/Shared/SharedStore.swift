import ChronicleLog
import Foundation
import Observation
import Synchronization

/// A store whose history is a shared stream: one log that many devices append to, in the order a
/// server assigns (``/ChronicleLog/StreamServer``; ChroniclePostgres provides PostgreSQL's), and that every
/// device holds byte for byte once it has caught up.
///
/// A device works offline first. ``send(_:metadata:)`` reduces and validates the action on the
/// device's current state, appends it to the device's outbox (durable before `send` returns) and
/// applies it at once: ``state`` is the stream's state with the device's *pending* actions on
/// top. ``sync(with:progress:)`` pulls what others pushed, *rebases* the pending actions on it
/// (reduces them again, on the newer state, and runs the validators again) and pushes them where
/// they continue the server's head. An action a validator now refuses enters the stream as a
/// rejection marker instead, recorded the same way on every device, and the sender is told
/// (``onRejection(_:)``). `docs/sync.md` explains the model, its guarantees and their limits.
///
/// ```swift
/// let store = try SharedStore(
///   initialState: Ledger.State(), reducer: Ledger(), directory: url,
///   stream: SharedStream("ledger"), device: "tablet-3",
///   validators: [Validator("no account below zero") { $0.balances.values.allSatisfy { $0 >= 0 } }])
/// try store.send(.deposit("cash", 500))            // applied now, durable now
/// await store.syncContinuously(with: server)       // until the task is cancelled
/// ```
///
/// Effects run once, on the device that sent the action, when it is applied (not again when it
/// is rebased or confirmed): their work is usually what the user waits for, and a device may stay
/// offline for days. An action they send back is a new pending action.
public final class SharedStore<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  /// The stream this store holds a copy of.
  public let stream: SharedStream
  /// This device's name, recorded with every action it sends.
  public let device: String
  /// The options it was opened with.
  public let options: SharedStoreOptions

  /// The device's copy of the stream: exactly the stream's entries, in the server's order.
  let mirror: ActionLog
  /// The device's outbox: every action it sent, and the markers of which the stream settled.
  let outbox: ActionLog
  let reducer: AnyReducer<State, Action>
  let validators: [Validator<State>]
  let initialState: State
  let core: Mutex<Core>
  let delivery: SharedDelivery<State, Action>
  let effects = EffectTasks()
  /// Rung by every send, so that a continuous sync pushes it without waiting for the server.
  let doorbell = Doorbell()
  /// Whether a sync round is running (one at a time).
  let syncing = Mutex(false)
  /// What the last sync round saw (also in the outbox's `sync.json`).
  let lastSync = Mutex<SharedStreamStatus.SyncState?>(nil)

  /// An action (or a revert: an undo or a redo) of this device's outbox that the stream has not settled.
  struct Pending: Sendable {
    var seq: UInt64
    var entry: NewEntry
    /// The action; `nil` for a revert.
    var action: Action?
    var revert: Revert?
  }

  /// One of this device's actions or reverts that the stream holds.
  struct Own: Sendable {
    var id: String
    var revert: Revert?
  }

  struct Core: Sendable {
    /// The state after the stream's entries the device holds.
    var confirmed: State
    /// The last of them.
    var head: ChainAnchor
    /// The reverts among them, oldest first.
    var reverts: [Revert]
    /// This device's actions and reverts among them, oldest first.
    var own: [Own] = []
    /// The outbox's last entry.
    var outboxHead: UInt64
    /// The last outbox action the outbox's markers record as settled.
    var markedThrough: UInt64
    var pending: [Pending]
    /// ``confirmed`` with the pending actions the validators accept on it applied.
    var state: State
    /// The pending actions the validators refuse on the current stream state, with the reason.
    var refused: [UInt64: String] = [:]
    var namer = ActionNamer<Action>()
    var isClosed = false
    /// Why the store stopped syncing: an entry of the stream it cannot fold (written by a newer
    /// version of the app). Sends and syncs throw it.
    var failure: ChronicleError?
  }

  /// Opens (or creates) the device's copy of `stream` in `directory`, and its outbox in
  /// `directory/pending`: the stream's entries are folded with `reducer` from `initialState`, and
  /// the pending actions applied on top.
  ///
  /// A new directory needs no server: the stream's identity comes from its name.
  ///
  /// - Throws: ``ChronicleError/unsupported(_:)`` for an empty device name or a directory that
  ///   holds another stream; ``ChronicleError/logLocked(path:)`` when another process has it open;
  ///   ``ChronicleError/undecodableEntry(seq:type:underlying:)`` for an entry the reducer's
  ///   actions cannot decode; ``ChronicleError/log(_:)`` otherwise. Nothing is written then.
  public convenience init<R: Reducer>(
    initialState: State, reducer: R, directory: URL, stream: SharedStream, device: String,
    options: SharedStoreOptions = SharedStoreOptions(), validators: [Validator<State>] = []
  ) throws where R.State == State, R.Action == Action {
    try self.init(
      initialState: initialState, reducer: AnyReducer(reducer), directory: directory, stream: stream, device: device,
      options: options, validators: validators)
  }

  init(
    initialState: State, reducer: AnyReducer<State, Action>, directory: URL, stream: SharedStream, device: String,
    options: SharedStoreOptions, validators: [Validator<State>]
  ) throws {
    guard !device.isEmpty else {
      throw ChronicleError.unsupported("a shared store needs a device name: pass device: \"…\", unique per device")
    }
    guard !stream.name.isEmpty else {
      throw ChronicleError.unsupported("a shared stream needs a name: SharedStream(\"…\")")
    }
    self.stream = stream
    self.device = device
    self.options = options
    self.reducer = reducer
    self.validators = validators
    self.initialState = initialState
    func logOptions(_ id: [UInt8]?) -> ActionLog.Options {
      ActionLog.Options(
        durability: options.durability, appID: stream.name, schemaVersion: options.schemaVersion,
        maxLogSize: options.maxLogSize, keyRing: options.keyRing, logID: id)
    }
    do {
      mirror = try ActionLog(directory: directory, options: logOptions(stream.id))
    } catch {
      throw ChronicleError(error)
    }
    do {
      guard try mirror.logID() == stream.id else {
        throw ChronicleError.unsupported(
          "\(mirror.path) holds a log that is not a copy of the shared stream \"\(stream.name)\"; open a new directory")
      }
      outbox = try ActionLog(
        directory: directory.appendingPathComponent(SharedStreamLayout.pendingDirectory), options: logOptions(nil))
    } catch {
      try? mirror.close()
      throw ChronicleError(error)
    }
    delivery = SharedDelivery()
    do {
      core = Mutex(
        Core(confirmed: initialState, head: .genesis, reverts: [], outboxHead: 0, markedThrough: 0, pending: [], state: initialState))
      let recovered = try recover()
      try core.withLock { core in
        core = recovered.core
        try settle(through: recovered.settled.through, stream: recovered.settled.stream, &core)
        try rebase(&core)
      }
    } catch {
      try? outbox.close()
      try? mirror.close()
      throw ChronicleError(error)
    }
  }

  // MARK: - Reading

  /// The device's current state: the stream's state with its pending actions applied (those the
  /// validators still accept on it).
  public var state: State {
    delivery.notifier.access()
    return core.withLock { $0.state }
  }

  /// The state after the stream's entries the device holds, without its pending actions.
  public var confirmedState: State { core.withLock { $0.confirmed } }

  /// The last stream entry the device holds: its sequence number and chain hash. Every device
  /// that holds the same sequence number holds the same hash, and the same entries.
  public var head: ChainAnchor { core.withLock { $0.head } }

  /// This device's actions the stream has not settled yet, oldest first: their outbox sequence
  /// numbers, the action (`nil` for an undo or a redo), and the reason a validator refuses it on
  /// the current stream state, if it does (it then enters the stream as a refusal at the next push).
  public var pending: [(seq: UInt64, action: Action?, refusedBecause: String?)] {
    core.withLock { core in core.pending.map { ($0.seq, $0.action, core.refused[$0.seq]) } }
  }

  /// The Merkle root of the stream entries the device holds (RFC 9162, as ``/ChronicleLog/ActionLog/treeRoot(size:)``):
  /// the same on every device that holds the same ``head``, and what a signed checkpoint commits to.
  public func treeRoot() throws -> [UInt8] {
    do { return try mirror.treeRoot(size: head.seq) } catch { throw ChronicleError(error) }
  }

  /// The path of the device's copy of the stream.
  public var path: String { mirror.path }

  /// The state after stream entry `seq` (0: the initial state), folded from the first entry.
  ///
  /// - Throws: ``ChronicleError/noSuchEntry(seq:)`` beyond the entries the device holds.
  public func state(at seq: UInt64) throws -> State {
    let head = core.withLock { $0.head.seq }
    guard seq <= head else { throw ChronicleError.noSuchEntry(seq: seq) }
    do {
      return try fold(through: seq, skipping: Revert.takenBack(by: reverts(through: seq)))
    } catch {
      throw ChronicleError(error)
    }
  }

  /// The refusals the stream records, oldest first (every device's, not only this one's).
  public func rejections() throws -> [Rejection<Action>] {
    var found: [Rejection<Action>] = []
    do {
      try mirror.forEach { entry in
        if let rejection = try rejection(in: entry) { found.append(rejection) }
      }
    } catch {
      throw ChronicleError(error)
    }
    return found
  }

  // MARK: - Sending

  /// Reduces `action` on the current state, checks the validators, appends it to the outbox
  /// (durable on the device before this returns) and applies it; the next sync pushes it.
  ///
  /// - Returns: the action's sequence number in the device's outbox.
  /// - Throws: ``ChronicleError/rejected(reason:)`` when a validator refuses the new state (nothing
  ///   is kept), ``ChronicleError/closed``, or the outbox's storage error.
  @discardableResult
  public func send(_ action: Action, metadata: [String: String] = [:]) throws -> UInt64 {
    try send(action, metadata: metadata, flags: [])
  }

  func send(_ action: Action, metadata: [String: String], flags: EntryFlags) throws(ChronicleError) -> UInt64 {
    let (seq, old, new, effect) = try core.withLock { core throws(ChronicleError) in
      guard !core.isClosed else { throw .closed }
      var state = core.state
      let effect = reducer.reduce(into: &state, action: action)
      for validator in validators where !validator.isValid(state) { throw .rejected(reason: validator.reason) }
      let payload: [UInt8]
      do { payload = try options.codec.encode(action) } catch {
        throw .unencodable(type: "\(Action.self)", underlying: error)
      }
      let seq = core.outboxHead + 1
      var metadata = metadata
      metadata[SharedStreamLayout.deviceKey] = device
      metadata[SharedStreamLayout.pendingKey] = String(seq)
      let entry = NewEntry(
        kind: .action, flags: flags, typeName: core.namer.name(of: action, payload: payload, codec: options.codec),
        metadata: metadata, codec: options.codec, schemaVersion: options.schemaVersion, payload: payload,
        timestamp: Date().microsecondsSince1970)
      do { try outbox.append(entry) } catch { throw ChronicleError(error) }
      core.outboxHead = seq
      core.pending.append(Pending(seq: seq, entry: entry, action: action, revert: nil))
      let old = core.state
      core.state = state
      return (seq, old, state, effect)
    }
    delivery.post(old: old, new: new)
    doorbell.ring()
    effects.start(effect, send: { [weak self] action in self?.sendFromEffect(action) }, report: reportEffectError)
    return seq
  }

  func sendFromEffect(_ action: Action) {
    if Task.isCancelled { return }
    do { _ = try send(action, metadata: [:], flags: [.fromEffect]) } catch { reportEffectError(error) }
  }

  func reportEffectError(_ error: any Error) {
    EffectTasks.report(error, to: options.onEffectError)
  }

  // MARK: - Observing

  /// Calls `observer` on the main actor with the new and the old state after every change: a
  /// send, and every sync that received entries or rebased pending actions. Keep the token.
  public func subscribe(_ observer: @escaping @MainActor @Sendable (_ new: State, _ old: State) -> Void) -> Subscription {
    delivery.subscribe(observer)
  }

  /// The current state, then every new state, delivered to the task that iterates it.
  public var states: AsyncStream<State> {
    AsyncStream { continuation in
      continuation.yield(core.withLock { $0.state })
      let subscription = subscribe { new, _ in continuation.yield(new) }
      continuation.onTermination = { _ in subscription.cancel() }
    }
  }

  /// Calls `handler` on the main actor, once, for each action of this device that the stream
  /// refused (recorded as a rejection marker); the action is no longer pending then.
  public func onRejection(_ handler: @escaping @MainActor @Sendable (Rejection<Action>) -> Void) -> Subscription {
    delivery.onRejection(handler)
  }

  /// The number of `.run` effects still running.
  public var runningEffects: Int { effects.count }

  /// Waits until no `.run` effect is running.
  public func waitForEffects() async { await effects.waitForAll() }

  // MARK: - Closing

  /// Cancels running effects, then syncs and closes both logs. Idempotent.
  public func close() throws {
    let wasOpen = core.withLock { core in
      defer { core.isClosed = true }
      return !core.isClosed
    }
    guard wasOpen else { return }
    effects.cancelAll()
    doorbell.ring()
    var failure: (any Error)?
    do { try outbox.close() } catch { failure = error }
    do { try mirror.close() } catch { failure = failure ?? error }
    if let failure { throw ChronicleError(failure) }
  }

  deinit { try? close() }
}

// MARK: - Observation framework

/// SwiftUI views that read ``SharedStore/state`` are told of every change on the main actor.
extension SharedStore: Observable {}
