/// Where a device keeps a shared stream, and the names its entries use (see `docs/sync.md`).
///
/// A device's directory *is* its copy of the stream: an ordinary Chronicle log whose entries are
/// the stream's, in the server's order, byte for byte (app identifier: the stream's name; log
/// identifier: ``SharedStream/id``). Nothing else is ever appended to it. Beside the entries, in
/// the subdirectory ``pendingDirectory``, is the device's *outbox*: another Chronicle log holding
/// every action the device sent, durable before `send` returned, and the markers that say which
/// of them the stream has settled.
///
/// - An action the device sends is appended to the outbox with ``deviceKey`` and ``pendingKey``
///   (its outbox sequence number) in its metadata.
/// - Pushed, it enters the stream as the same entry (kind, type name, metadata, payload,
///   timestamp). A pending action that a validator refuses on the newer upstream state enters the
///   stream as a marker entry named ``rejectedTypeName`` instead, with the action's payload, its
///   metadata, its type name under ``typeKey`` and the validator's reason under ``reasonKey``:
///   every device records the refusal the same way.
/// - An undo (or a redo) is a marker entry named ``revertTypeName``, pending and pushed like an
///   action, whose ``targetKey`` names the entry it takes back. Folding leaves out every action a
///   revert takes back, unless a later revert took that revert back.
/// - Once the stream holds entries for outbox actions up to *n*, the outbox gets a marker named
///   ``resolvedTypeName`` whose payload is JSON `{"through": n, "stream": m}`: the stream's entry
///   *m* settled action *n*. The outbox actions after the last such marker are pending.
public enum SharedStreamLayout {
  /// The outbox's directory inside the device's directory.
  public static let pendingDirectory = "pending"
  /// The file, in the outbox's directory, where the sync records its last contact with the server.
  public static let syncStateFile = "sync.json"
  /// Metadata: the device that sent the action.
  public static let deviceKey = "chronicle.device"
  /// Metadata: the action's sequence number in its device's outbox, in decimal.
  public static let pendingKey = "chronicle.pending"
  /// Metadata of a rejection marker: the refused action's type name.
  public static let typeKey = "chronicle.type"
  /// Metadata of a rejection marker: the validator's reason.
  public static let reasonKey = "chronicle.reason"
  /// The type name of the marker that records a refused action in the stream.
  public static let rejectedTypeName = "chronicle.rejected"
  /// The type name of the marker that takes back an earlier entry of the same device (an undo, or,
  /// when it names a revert, a redo); ``targetKey`` names that entry.
  public static let revertTypeName = "chronicle.revert"
  /// Metadata of a revert: the entry it takes back, as `"DEVICE SEQ"` (its ``deviceKey`` and ``pendingKey``).
  public static let targetKey = "chronicle.target"
  /// The type name of the outbox marker that records which actions the stream settled.
  public static let resolvedTypeName = "chronicle.resolved"
}
