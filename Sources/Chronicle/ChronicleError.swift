import ChronicleLog

/// Why a store refused or failed an operation.
///
/// ```swift
/// do { try store.send(.withdraw(500)) }
/// catch ChronicleError.rejected(let reason) { show(reason) }
/// ```
public enum ChronicleError: Error, CustomStringConvertible {
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
  /// The operation needs the root store (scoped stores only read and send).
  case unsupported(String)
  /// The log failed: storage, format, permissions.
  case log(LogError)

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
    case .unsupported(let what): what
    case .log(let error): error.description
    }
  }

  /// The error a log operation threw, as the store reports it (a log operation throws ``LogError``).
  @usableFromInline
  init(_ error: any Error) {
    switch error {
    case let error as ChronicleError: self = error
    case let error as LogError: self.init(error)
    default: self = .log(.invalidEntry(reason: "\(error)"))
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
