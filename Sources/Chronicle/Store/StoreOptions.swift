import ChronicleLog
import Foundation

/// How a store writes, snapshots, encodes and undoes.
///
/// ```swift
/// StoreOptions(durability: .full, snapshotEvery: 1_000)
/// ```
public struct StoreOptions: Sendable {
  /// When a `send` is durable: `.full` fsyncs each commit; `.normal` survives a process crash.
  public var durability: Durability
  /// Write a snapshot every this many entries (0: only at `close()`).
  public var snapshotEvery: Int
  /// How many snapshots to keep, newest first (1,000 by default); `nil` keeps them all.
  ///
  /// Snapshots are the index of ``Store/state(at:)``, ``Store/restore(to:metadata:)``,
  /// ``Store/undo(metadata:)`` and ``Store/redo(metadata:)``: each starts from the newest
  /// snapshot at or before the state it needs and folds the entries after it. Every snapshot
  /// holds the whole state, so the file grows by one state per snapshot. The default bounds
  /// that growth to 1,000 states while, with the default ``snapshotEvery`` of 1,000, every state
  /// of the last million entries stays at most 1,000 entries of folding away (a few
  /// milliseconds). A state older than every kept snapshot is still exact: it is folded from
  /// the initial state (or from the snapshot at a compacted log's cut, which is never pruned),
  /// only slower. An app with a large state, or a small `snapshotEvery`, keeps fewer (recovery
  /// needs only the newest; undo and redo reach back ``undoDepth`` steps).
  public var snapshotsKept: Int?
  /// The codec of new entries and snapshots (a log may mix codecs).
  public var codec: PayloadCodec
  /// The version of the app's `Action` encoding; recorded with every entry.
  public var schemaVersion: UInt32
  /// The version of the app's `State` encoding, recorded with every snapshot.
  ///
  /// A snapshot of another version is used only through one of ``stateMigrations``;
  /// without one it is skipped and the state is folded from the entries instead.
  public var stateSchemaVersion: UInt32
  /// Conversions of snapshots written with older state schema versions (see ``StateMigration``).
  ///
  /// A compacted log has lost the entries before its oldest snapshot: once the app's `State`
  /// changes, that snapshot is readable only through a migration from its version.
  public var stateMigrations: [StateMigration] = []
  /// Conversions of entries written with older action schema versions.
  public var migrations: [Migration]
  /// The app's identifier, recorded in a new log and checked when opening one.
  ///
  /// It names the log in exports (`"appID"`), in `logtool info` and in the origin line of
  /// signed checkpoints (`chronicle/<appID>/…`), and a log of another app refuses to open.
  /// Left empty, a store that creates a new directory log records the directory's name
  /// without its extension instead (`counter` for `counter.log`) and says so in
  /// ``Store/recovery``'s warnings: every log gets a name, and a forgotten option is
  /// visible rather than silent. Failing instead would break every first run of an app
  /// that forgot it; a name chosen here is recorded once and never changes with the
  /// directory. Logs created empty by earlier versions keep opening as they are, and an
  /// `.inMemory` log keeps an empty identifier.
  public var appID: String
  /// With `.normal` durability, how often committed entries are synced in the background.
  public var flushInterval: Duration?
  /// The deepest undo history kept (older steps can no longer be undone).
  public var undoDepth: Int
  /// Actions for which this returns `false` are not undo steps of their own (undo skips them).
  /// Actions sent back by effects are never undo steps.
  ///
  /// Set it through the initializer that takes a predicate typed by the
  /// action, `isUndoable: { (action: Ledger.Action) in … }`: this untyped form
  /// remains for existing code and receives the store's `Action`.
  public var isUndoable: (@Sendable (Any) -> Bool)? {
    didSet { undoableActionType = nil }
  }
  /// The action type the typed `isUndoable` predicate takes; a store of another action type refuses to open.
  @usableFromInline var undoableActionType: (id: ObjectIdentifier, name: String)?
  /// Where errors of effects go (a thrown error, an action a validator rejected);
  /// by default they are printed to standard error, never dropped.
  public var onEffectError: (@Sendable (any Error) -> Void)?
  /// Where failures of the store's own background work go: a periodic snapshot
  /// that could not be written arrives as ``ChronicleError/snapshotFailed(seq:underlying:)``
  /// (committed entries are safe; the snapshot is retried after another
  /// ``snapshotEvery`` entries), an automatic checkpoint that could not be signed as
  /// ``ChronicleError/checkpointFailed(seq:underlying:)``. Called after the send that triggered the work,
  /// outside the store's locks. By default the error is printed to standard error.
  public var onBackgroundError: (@Sendable (ChronicleError) -> Void)?
  /// The LMDB map's ceiling in bytes: a send beyond it fails with a clear error.
  public var maxLogSize: Int
  /// Where SwiftUI and other Observation-framework observers hear of changes:
  /// on the main actor by default (see ``ObservationDelivery``).
  public var observationDelivery: ObservationDelivery = .mainActor
  /// The key that signs the log's checkpoints (docs/log-format.md §9); `nil` (the default): the
  /// store signs none.
  ///
  /// The key comes from the app: on Apple platforms from the Keychain, elsewhere from a file
  /// readable only by the app's user or from the environment. Only the signed checkpoints are
  /// written into the log, never the private key. With a signer, ``Store/checkpoint()`` signs
  /// the head now, the store signs one every ``checkpointEvery`` entries, and `close()` signs
  /// the final one.
  ///
  /// ```swift
  /// let signer = try NoteSigner(parsing: String(contentsOf: keyFile, encoding: .utf8))
  /// let options = StoreOptions(checkpointSigner: signer, checkpointEvery: 10_000)
  /// ```
  public var checkpointSigner: NoteSigner?
  /// With a ``checkpointSigner``, sign a checkpoint after every commit that crosses a multiple of
  /// this many entries (0: only ``Store/checkpoint()`` and the one at `close()`).
  ///
  /// A checkpoint that cannot be signed or stored is reported to ``onBackgroundError`` as
  /// ``ChronicleError/checkpointFailed(seq:underlying:)``; the `send` that triggered it succeeds,
  /// and the next multiple tries again.
  public var checkpointEvery: Int
  /// The keys that encrypt the log (`docs/security.md`); `nil` (the default): the log is in the clear.
  ///
  /// A store opened with a ring creates an encrypted log, and an encrypted log needs its ring to
  /// open. Keys come from the app, as the ``checkpointSigner``'s do, and never go into the log.
  ///
  /// ```swift
  /// var options = StoreOptions(appID: "ledger")
  /// options.keyRing = try KeyRing(contentsOf: keyFile)
  /// ```
  public var keyRing: KeyRing? = nil

  /// Creates options.
  public init(
    durability: Durability = .normal, snapshotEvery: Int = 1_000, snapshotsKept: Int? = 1_000,
    codec: PayloadCodec = .cbor, schemaVersion: UInt32 = 1, stateSchemaVersion: UInt32 = 1,
    migrations: [Migration] = [], appID: String = "", flushInterval: Duration? = .seconds(1),
    undoDepth: Int = 100, isUndoable: (@Sendable (Any) -> Bool)? = nil,
    onEffectError: (@Sendable (any Error) -> Void)? = nil, maxLogSize: Int = 1 << 40,
    onBackgroundError: (@Sendable (ChronicleError) -> Void)? = nil,
    checkpointSigner: NoteSigner? = nil, checkpointEvery: Int = 1_000
  ) {
    self.durability = durability
    self.snapshotEvery = snapshotEvery
    self.snapshotsKept = snapshotsKept
    self.codec = codec
    self.schemaVersion = schemaVersion
    self.stateSchemaVersion = stateSchemaVersion
    self.migrations = migrations
    self.appID = appID
    self.flushInterval = flushInterval
    self.undoDepth = undoDepth
    self.isUndoable = isUndoable
    self.onEffectError = onEffectError
    self.maxLogSize = maxLogSize
    self.onBackgroundError = onBackgroundError
    self.checkpointSigner = checkpointSigner
    self.checkpointEvery = checkpointEvery
  }
}

extension StoreOptions {
  /// Creates options whose `isUndoable` is typed by the app's action: actions
  /// for which it returns `false` are not undo steps of their own.
  ///
  /// ```swift
  /// let options = StoreOptions(snapshotEvery: 500, isUndoable: { (action: Ledger.Action) in
  ///   if case .refreshed = action { return false }
  ///   return true
  /// })
  /// ```
  ///
  /// A store whose `Action` is not `Action` refuses to open with these options.
  public init<Action: Sendable>(
    durability: Durability = .normal, snapshotEvery: Int = 1_000, snapshotsKept: Int? = 1_000,
    codec: PayloadCodec = .cbor, schemaVersion: UInt32 = 1, stateSchemaVersion: UInt32 = 1,
    migrations: [Migration] = [], appID: String = "", flushInterval: Duration? = .seconds(1),
    undoDepth: Int = 100, isUndoable: @escaping @Sendable (Action) -> Bool,
    onEffectError: (@Sendable (any Error) -> Void)? = nil, maxLogSize: Int = 1 << 40,
    onBackgroundError: (@Sendable (ChronicleError) -> Void)? = nil,
    checkpointSigner: NoteSigner? = nil, checkpointEvery: Int = 1_000
  ) {
    self.init(
      durability: durability, snapshotEvery: snapshotEvery, snapshotsKept: snapshotsKept, codec: codec,
      schemaVersion: schemaVersion, stateSchemaVersion: stateSchemaVersion, migrations: migrations, appID: appID,
      flushInterval: flushInterval, undoDepth: undoDepth, isUndoable: nil, onEffectError: onEffectError,
      maxLogSize: maxLogSize, onBackgroundError: onBackgroundError, checkpointSigner: checkpointSigner,
      checkpointEvery: checkpointEvery)
    setUndoable(isUndoable)
  }

  /// Makes `predicate`, typed by the app's action, decide which actions are undo steps of their own.
  public mutating func setUndoable<Action: Sendable>(_ predicate: @escaping @Sendable (Action) -> Bool) {
    isUndoable = { action in (action as? Action).map(predicate) ?? true }
    undoableActionType = (ObjectIdentifier(Action.self), "\(Action.self)")
  }
}
