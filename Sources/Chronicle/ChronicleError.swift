import ChronicleLog
import Foundation

// MARK: - ChronicleError

/// Why a store refused or failed an operation.
///
/// Everything `Store`, `ScopedStore` and `HistoryReader` throw is a
/// `ChronicleError`; a failure of the log underneath arrives as ``log(_:)``,
/// carrying the log's ``/ChronicleLog/LogError``. Its `description` (and
/// `localizedDescription`) is one sentence naming what went wrong and where.
///
/// ```swift
/// do { try store.send(.withdraw(500)) }
/// catch ChronicleError.rejected(let reason) { show(reason) }
/// ```
public enum ChronicleError: Error, CustomStringConvertible, LocalizedError {
  /// A validator refused the state the action would produce; nothing was logged or changed.
  case rejected(reason: String)
  /// Another writer (this process or another) has the log open.
  case logLocked(path: String)
  /// The entry `seq` cannot be decoded as the app's action (type name `type`);
  /// the store did not open and nothing was written.
  case undecodableEntry(seq: UInt64, type: String, underlying: any Error)
  /// The action or state could not be encoded; nothing was logged or changed.
  case unencodable(type: String, underlying: any Error)
  /// The store was closed.
  case closed
  /// There is nothing to undo.
  case nothingToUndo
  /// There is nothing to redo.
  case nothingToRedo
  /// The log holds no entry `seq` (or it was compacted away).
  case noSuchEntry(seq: UInt64)
  /// The state after entry `seq` is gone: the log was compacted at entry `cut`
  /// (its history up to the cut lives in the compaction's archive, if one was kept).
  case compacted(seq: UInt64, cut: UInt64)
  /// `send(contentsOf:)` was given no action: an empty batch has no sequence
  /// numbers to return. Nothing was logged or changed.
  case emptyBatch
  /// The snapshot at entry `seq` cannot be used (written for another state
  /// schema version, or undecodable as the app's state); `reason` says why.
  /// The entries are intact: the state is reached by folding them instead.
  case unusableSnapshot(seq: UInt64, reason: String)
  /// A periodic snapshot at entry `seq` could not be written; `underlying` says why.
  ///
  /// Reported to ``StoreOptions/onBackgroundError``, never thrown by `send`:
  /// the entries are committed and safe, only the next open replays more of them.
  /// The store tries again after another ``StoreOptions/snapshotEvery`` entries.
  indirect case snapshotFailed(seq: UInt64, underlying: ChronicleError)
  /// ``Store/checkpoint()`` was called on a store opened without a
  /// ``StoreOptions/checkpointSigner``: there is no key to sign with. Nothing was written.
  case noCheckpointSigner
  /// The checkpoint of the first `seq` entries could not be signed or stored; `underlying` says
  /// why (a ``/ChronicleLog/TreeError`` or ``/ChronicleLog/LogError``). The entries are committed
  /// and safe.
  ///
  /// Thrown by ``Store/checkpoint()`` and `close()`; an automatic checkpoint (every
  /// ``StoreOptions/checkpointEvery`` entries) that fails is reported to
  /// ``StoreOptions/onBackgroundError`` instead, never thrown by `send`, and the next one is
  /// tried at the next multiple.
  case checkpointFailed(seq: UInt64, underlying: any Error)
  /// The operation is not possible on this log (replaying a compacted log from
  /// its initial state, for example); the text says why.
  case unsupported(String)
  /// The log failed: storage, format, permissions.
  case log(LogError)
  /// Code the store calls on the app's behalf (a migration, a custom codec)
  /// threw `underlying`, which is none of the above.
  case other(underlying: any Error)

  /// One line that says what went wrong.
  public var description: String {
    switch self {
    case .rejected(let reason): "rejected: \(reason)"
    case .logLocked(let path): "the log at \(path) is locked by another writer"
    case .undecodableEntry(let seq, let type, let underlying):
      "entry \(seq) (type '\(type)') cannot be decoded: \(underlying)"
    case .unencodable(let type, let underlying): "'\(type)' cannot be encoded: \(underlying)"
    case .closed: "the store is closed"
    case .nothingToUndo: "there is nothing to undo"
    case .nothingToRedo: "there is nothing to redo"
    case .noSuchEntry(let seq): "the log holds no entry \(seq)"
    case .compacted(let seq, let cut):
      "the state after entry \(seq) is gone: the log was compacted at entry \(cut), and its history starts there"
    case .emptyBatch: "an empty batch was sent: it has no sequence numbers, nothing was logged"
    case .unusableSnapshot(let seq, let reason): "the snapshot at entry \(seq) cannot be used: \(reason)"
    case .snapshotFailed(let seq, let underlying):
      "the snapshot at entry \(seq) could not be written (the entries are safe): \(underlying)"
    case .noCheckpointSigner:
      "the store has no checkpoint signer (StoreOptions.checkpointSigner): no checkpoint was signed"
    case .checkpointFailed(let seq, let underlying):
      "the checkpoint of entries 1…\(seq) could not be signed (the entries are safe): \(underlying)"
    case .unsupported(let what): what
    case .log(let error): error.description
    case .other(let underlying): "\(underlying)"
    }
  }

  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }

  /// The error a log operation threw, as the store reports it (a log operation throws ``LogError``).
  @usableFromInline
  init(_ error: any Error) {
    switch error {
    case let error as ChronicleError: self = error
    case let error as LogError: self.init(error)
    default: self = .other(underlying: error)
    }
  }

  @usableFromInline
  init(_ error: LogError) {
    switch error {
    case .locked(let path): self = .logLocked(path: path)
    default: self = .log(error)
    }
  }
}
