import Foundation
import LMDB

/// What went wrong with a log, naming the path and, where there is one, the sequence number.
///
/// ```swift
/// do { let log = try ActionLog(directory: url) }
/// catch LogError.locked(let path) { print("another writer has \(path) open") }
/// ```
public enum LogError: Error, CustomStringConvertible, LocalizedError {
  /// Nothing exists at `path` (and the log was opened without creating one).
  case noSuchLog(path: String)
  /// `path` exists but is not a directory.
  case notADirectory(path: String)
  /// `path` holds something that is not a Chronicle log; `reason` says what was found.
  case notALog(path: String, reason: String)
  /// The log was written by a newer format version than this library reads.
  case newerFormat(path: String, found: UInt32, supported: UInt32)
  /// The log was created by another app than the one opening it.
  case appMismatch(path: String, expected: String, found: String)
  /// Another writer (this process or another) holds the log open for writing.
  case locked(path: String)
  /// The operating system refused access.
  case permissionDenied(path: String, operation: String)
  /// A write was attempted on a log opened read-only.
  case readOnly(path: String)
  /// The log was closed.
  case closed(path: String)
  /// A stored entry violates the format; `seq` names it.
  case corruptEntry(path: String, seq: UInt64, reason: String)
  /// A stored snapshot violates the format or does not match the chain.
  case corruptSnapshot(path: String, seq: UInt64, reason: String)
  /// Meta data is missing or malformed.
  case corruptMeta(path: String, reason: String)
  /// A request names a sequence number the log does not hold.
  case noSuchEntry(path: String, seq: UInt64)
  /// A value did not fit the format (a type name over 65,535 bytes, for example).
  case invalidEntry(reason: String)
  /// A payload failed to encode or decode with its codec.
  case codec(codec: PayloadCodec, typeName: String, underlying: any Error)
  /// LMDB reported an error.
  case storage(LMDBError)

  /// One line that says what and where.
  public var description: String {
    switch self {
    case .noSuchLog(let path): "no log at \(path): the path does not exist"
    case .notADirectory(let path): "\(path) is not a directory: a Chronicle log is a directory"
    case .notALog(let path, let reason): "\(path) is not a Chronicle log: \(reason)"
    case .newerFormat(let path, let found, let supported):
      "\(path) was written in log format \(found); this version reads format \(supported) and older"
    case .appMismatch(let path, let expected, let found):
      "\(path) belongs to app '\(found)', not '\(expected)'"
    case .locked(let path): "\(path) is locked: another writer has it open (read-only access still works)"
    case .permissionDenied(let path, let operation): "permission denied \(operation) \(path)"
    case .readOnly(let path): "\(path) is open read-only"
    case .closed(let path): "the log at \(path) is closed"
    case .corruptEntry(let path, let seq, let reason): "entry \(seq) of \(path) is corrupt: \(reason)"
    case .corruptSnapshot(let path, let seq, let reason): "snapshot at \(seq) of \(path) is corrupt: \(reason)"
    case .corruptMeta(let path, let reason): "the meta data of \(path) is corrupt: \(reason)"
    case .noSuchEntry(let path, let seq): "\(path) has no entry \(seq)"
    case .invalidEntry(let reason): "invalid entry: \(reason)"
    case .codec(let codec, let typeName, let underlying):
      "\(codec) codec failed on '\(typeName)': \(underlying)"
    case .storage(let error): error.description
    }
  }

  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}

// MARK: - CBORError

extension CBORError: LocalizedError {
  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}

/// Runs `body`, turning `LMDBError`s into `LogError.storage`.
@inline(__always)
func storage<R>(_ body: () throws -> R) throws(LogError) -> R {
  do {
    return try body()
  } catch let error as LogError {
    throw error
  } catch let error as LMDBError {
    throw .storage(error)
  } catch {
    throw .invalidEntry(reason: "\(error)")
  }
}
