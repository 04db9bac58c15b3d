import CChronicleLMDB
import Foundation

/// An error reported by LMDB, or by this wrapper around it.
///
/// It carries LMDB's numeric code, LMDB's own message for that code
/// (`mdb_strerror`), and what was being done when it happened, including the
/// environment's path, so that a log line alone says what went wrong where:
///
/// ```swift
/// do {
///   try env.write { txn in try txn.put(value, forKey: key, in: db, flags: .noOverwrite) }
/// } catch let error as LMDBError where error.code == .keyExists {
///   // the key was already there
/// }
/// ```
public struct LMDBError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
  /// LMDB's result code (negative values are LMDB's own, positive ones are `errno` values).
  public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw C value.
    public var rawValue: Int32
    /// Wraps a raw C value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `MDB_KEYEXIST`: the key/data pair already exists.
    public static let keyExists = Code(rawValue: MDB_KEYEXIST)
    /// `MDB_NOTFOUND`: no such key.
    public static let notFound = Code(rawValue: MDB_NOTFOUND)
    /// `MDB_CORRUPTED`: a page has an invalid type.
    public static let corrupted = Code(rawValue: MDB_CORRUPTED)
    /// `MDB_PANIC`: an update failed fatally; the environment must be closed.
    public static let panic = Code(rawValue: MDB_PANIC)
    /// `MDB_VERSION_MISMATCH`: the environment was written by another LMDB version.
    public static let versionMismatch = Code(rawValue: MDB_VERSION_MISMATCH)
    /// `MDB_INVALID`: the file is not an LMDB data file.
    public static let invalid = Code(rawValue: MDB_INVALID)
    /// `MDB_MAP_FULL`: the environment's map size was reached.
    public static let mapFull = Code(rawValue: MDB_MAP_FULL)
    /// `MDB_DBS_FULL`: the environment's `maxDatabases` was reached.
    public static let databasesFull = Code(rawValue: MDB_DBS_FULL)
    /// `MDB_READERS_FULL`: the environment's `maxReaders` was reached.
    public static let readersFull = Code(rawValue: MDB_READERS_FULL)
    /// `MDB_TXN_FULL`: the transaction has too many dirty pages.
    public static let transactionFull = Code(rawValue: MDB_TXN_FULL)
    /// `MDB_MAP_RESIZED`: another process grew the map beyond this one's size.
    public static let mapResized = Code(rawValue: MDB_MAP_RESIZED)
    /// `MDB_INCOMPATIBLE`: the operation is incompatible with the database or environment flags.
    public static let incompatible = Code(rawValue: MDB_INCOMPATIBLE)
    /// `MDB_BAD_VALSIZE`: a key or value has an unsupported size.
    public static let badValueSize = Code(rawValue: MDB_BAD_VALSIZE)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Code(rawValue: 13)
    /// `ENOENT`: no such file or directory.
    public static let noSuchFile = Code(rawValue: 2)
    /// `EINVAL`: invalid argument, also used for operations on a closed environment.
    public static let invalidArgument = Code(rawValue: 22)
    /// `ENOSPC`: no space left on device.
    public static let noSpace = Code(rawValue: 28)
    /// This wrapper's own (outside LMDB's and `errno`'s ranges): ``Environment/shared(path:configuration:readerGate:)``
    /// was asked for a writable environment on files this process holds open read-only.
    public static let sharedReadOnly = Code(rawValue: -30_000)

    /// LMDB's message for this code (`mdb_strerror`), or this wrapper's for its own codes.
    public var description: String {
      if self == .sharedReadOnly { return "the environment is held open read-only in this process" }
      return String(cString: mdb_strerror(rawValue))
    }
  }

  /// The result code.
  public var code: Code
  /// LMDB's message for `code`, or this wrapper's more precise one.
  public var message: String
  /// What was being done, with the environment's path, e.g. `"put in 'entries' (/var/log/app)"`.
  public var operation: String

  /// Creates an error for `code` with LMDB's message for it.
  public init(code: Code, operation: String) {
    self.init(code: code, message: code.description, operation: operation)
  }

  /// Creates an error with an explicit message.
  public init(code: Code, message: String, operation: String) {
    self.code = code
    self.message = message
    self.operation = operation
  }

  /// `"<message> (LMDB code <code>) while <operation>"`.
  public var description: String {
    "\(message) (LMDB code \(code.rawValue)) while \(operation)"
  }

  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}

/// Throws an `LMDBError` when `rc` is not `MDB_SUCCESS`.
@inline(__always)
func check(_ rc: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
  if rc != MDB_SUCCESS {
    throw LMDBError(code: .init(rawValue: rc), operation: operation())
  }
}
