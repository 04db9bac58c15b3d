import ChronicleLog

/// How a ``SharedStore`` keeps its copy of the stream and its outbox.
public struct SharedStoreOptions: Sendable {
  /// When the outbox's commits reach the disk: `.normal` (the default) survives a crash of the
  /// process with every acknowledged action kept; `.full` also a power loss.
  public var durability: Durability
  /// The payload codec of the actions this device sends.
  public var codec: PayloadCodec
  /// The action schema version recorded with each action this device sends.
  public var schemaVersion: UInt32
  /// The stream's keys, for an encrypted stream: every device holds the same ring, and the server
  /// stores only what they sealed. `nil` (the default) for a stream in the clear.
  public var keyRing: KeyRing?
  /// The ceiling of each of the two log files, in bytes.
  public var maxLogSize: Int
  /// How many entries a device asks the server for at a time when it catches up.
  public var pullBatchSize: Int
  /// How many pending actions a device pushes in one transaction at most.
  public var pushBatchSize: Int
  /// Receives the errors effects throw; without it they are written to standard error.
  public var onEffectError: (@Sendable (any Error) -> Void)?

  /// Creates options.
  public init(
    durability: Durability = .normal, codec: PayloadCodec = .cbor, schemaVersion: UInt32 = 1,
    keyRing: KeyRing? = nil, maxLogSize: Int = 1 << 40, pullBatchSize: Int = 1_000, pushBatchSize: Int = 1_000,
    onEffectError: (@Sendable (any Error) -> Void)? = nil
  ) {
    self.durability = durability
    self.codec = codec
    self.schemaVersion = schemaVersion
    self.keyRing = keyRing
    self.maxLogSize = maxLogSize
    self.pullBatchSize = pullBatchSize
    self.pushBatchSize = pushBatchSize
    self.onEffectError = onEffectError
  }
}

/// An action the stream refused: a validator rejected it on the state it reached when it was
/// pushed, after other devices' actions it had not seen when it was sent.
///
/// The refusal is itself an entry of the stream (a marker), so every device records it the same
/// way; the device that sent the action is told once, on the main actor
/// (``SharedStore/onRejection(_:)``).
public struct Rejection<Action: Sendable>: Sendable {
  /// The refused action.
  public var action: Action
  /// The validator's reason.
  public var reason: String
  /// The metadata it was sent with.
  public var metadata: [String: String]
  /// The device that sent it.
  public var device: String
  /// Its sequence number in that device's outbox.
  public var pendingSeq: UInt64
  /// The stream entry that records the refusal.
  public var streamSeq: UInt64
  /// Whether the refused entry was an undo or a redo (``SharedStore/undo(metadata:)``) that would
  /// have taken back ``action``, rather than the action itself.
  public var isRevert: Bool = false
}

/// What one ``SharedStore/sync(with:progress:)`` round did.
public struct SyncReport: Sendable, Hashable {
  /// Stream entries this device received (its own pushed ones included).
  public var received = 0
  /// Actions it pushed that the stream now holds.
  public var pushed = 0
  /// Actions it pushed as refused (rejection markers).
  public var rejected = 0
  /// Pushes that found the stream moved on and were rebased and tried again.
  public var retries = 0
  /// The stream head this device holds now.
  public var head: UInt64 = 0
}
