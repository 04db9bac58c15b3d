#if Postgres
import Foundation

// MARK: - Errors

/// Why shipping a log to PostgreSQL stopped. Each description is one line naming the log (its
/// identifier in hex), the sequence numbers and what to do.
public enum ShipError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
  /// The log has no identifier yet (no writer of this version has opened it).
  case noLogID(path: String)
  /// The server has no Chronicle schema: run ``PostgresSchema/migrate(_:)-(PostgresClient)`` (or `logtool`
  /// with `--migrate`).
  case noSchema(reason: String)
  /// The server's schema is older than this library's: migrate it first.
  case olderSchema(found: Int, supported: Int)
  /// The server's schema is newer than this library understands: update the library.
  case newerSchema(found: Int, supported: Int)
  /// The server holds entry `seq` of the log with a different hash: the device's log was rewritten,
  /// or two devices share one identifier. Nothing of the fork was stored; shipping stopped.
  case fork(logID: String, seq: UInt64)
  /// The device's log ends before what the server holds (its newest entries were lost); the
  /// entries it holds agree with the server's.
  case truncated(logID: String, deviceHead: UInt64, serverHead: UInt64)
  /// The device no longer holds the entries the server needs next (they were removed before they
  /// were shipped).
  case missingEntries(logID: String, path: String, from: UInt64, to: UInt64)
  /// The server knows the log under another origin (another app).
  case originMismatch(logID: String, server: String, device: String)
  /// The server refused a batch: it does not continue the stored chain (a gap, a wrong previous
  /// hash or a hash that is not the entry's). The log on the server is unchanged.
  case brokenLink(logID: String, reason: String)
  /// The server refused a checkpoint (beyond the shipped entries, or a root the stored entries do not produce).
  case checkpointRefused(logID: String, size: UInt64, reason: String)

  /// One line: what happened, to which log, at which entry.
  public var description: String {
    switch self {
    case .noLogID(let path):
      "\(path): the log has no identifier yet; open it for writing once with this version, then ship it"
    case .noSchema(let reason):
      "the server has no Chronicle schema (\(reason)); create it with PostgresSchema.migrate or `logtool ship --migrate`"
    case .olderSchema(let found, let supported):
      "the server's Chronicle schema is version \(found), this library ships to version \(supported); migrate it first (PostgresSchema.migrate or `logtool ship --migrate`)"
    case .newerSchema(let found, let supported):
      "the server's Chronicle schema is version \(found), newer than the version \(supported) this library knows; update the library"
    case .fork(let logID, let seq):
      "fork in log \(logID) at entry \(seq): the server holds a different entry \(seq) (the device's log was rewritten or two devices share one identifier); nothing of it was stored"
    case .truncated(let logID, let deviceHead, let serverHead):
      "log \(logID) is truncated on the device: it ends at entry \(deviceHead), the server holds entries up to \(serverHead)"
    case .missingEntries(let logID, let path, let from, let to):
      "\(path): log \(logID) no longer holds entries \(from)–\(to), which the server has not received"
    case .originMismatch(let logID, let server, let device):
      "log \(logID): the server knows it as '\(server)', the device names it '\(device)'"
    case .brokenLink(let logID, let reason):
      "the server refused a batch of log \(logID): \(reason)"
    case .checkpointRefused(let logID, let size, let reason):
      "the server refused the checkpoint of size \(size) of log \(logID): \(reason)"
    }
  }

  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}
#endif  // Postgres
