#if Postgres
import Foundation

// MARK: - Errors of a shared stream's server

/// Why an exchange with the PostgreSQL server of a shared stream failed (``PostgresStreamServer``).
/// Each description is one sentence naming the server, the stream and, where there is one, the
/// entry, and saying what to do.
public enum PostgresStreamError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
  /// An argument was refused before anything was sent: an empty stream or device name, a role name
  /// PostgreSQL cannot hold.
  case invalidArgument(reason: String)
  /// The server holds no stream of that name: ``PostgresStreamServer/createStream(_:encrypted:on:timeout:)``
  /// has not been run for it.
  case unknownStream(stream: String, server: String)
  /// The stream's identifier names a log shipped by ``LogShipper``, not a shared stream.
  case notAStream(stream: String, server: String)
  /// The server holds the stream with another origin or another encryption than asked.
  case streamMismatch(stream: String, server: String, reason: String)
  /// A record handed to ``PostgresStreamServer/append(_:previousHash:)`` is not an entry the stream
  /// can hold (its bytes do not parse, the records are not consecutive, its layout is not the
  /// stream's); nothing was sent.
  case invalidRecord(stream: String, seq: UInt64, reason: String)
  /// The server's schema has no shared streams (it is older than version 6).
  case olderSchema(server: String)
  /// The server refused entries of the stream because their device is not registered for the role
  /// the client connects as (SQLSTATE CH006); nothing was written.
  case deviceNotRegistered(stream: String, server: String, entries: ClosedRange<UInt64>, reason: String)
  /// The role the client connects as may not do what the step needed (SQLSTATE 42501).
  case permissionDenied(stream: String, server: String, step: String, reason: String)
  /// The server refused what the step sent for another reason (a record that does not link to the
  /// one before it: SQLSTATE CH002); nothing of it was written.
  case refused(stream: String, server: String, step: String, reason: String)
  /// ``PostgresStreamServer/registerDevice(_:role:in:on:timeout:)``: the device is registered in the
  /// stream for another role already (a registration is never changed).
  case deviceTaken(stream: String, device: String, role: String)
  /// ``PostgresStreamServer/registerDevice(_:role:in:on:timeout:)``: the cluster has no such role.
  case unknownRole(role: String, server: String)
  /// The server could not be reached, or the connection broke, during the step.
  case unreachable(stream: String, server: String, step: String, reason: String)
  /// ``PostgresStreamServer/waitForRecords(after:timeout:)`` after ``PostgresStreamServer/close()``.
  case closed(stream: String)

  /// One sentence: what happened, on which server, to which stream and entries, and what to do.
  public var description: String {
    switch self {
    case .invalidArgument(let reason):
      "\(reason)"
    case .unknownStream(let stream, let server):
      "\(server) holds no shared stream '\(stream)'; create it with PostgresStreamServer.createStream as the schema's owner"
    case .notAStream(let stream, let server):
      "\(server) holds the identifier of stream '\(stream)' as a shipped log, not a shared stream; choose another stream name"
    case .streamMismatch(let stream, let server, let reason):
      "\(server) holds stream '\(stream)' already, \(reason)"
    case .invalidRecord(let stream, let seq, let reason):
      "entry \(seq) of stream '\(stream)' was not sent: \(reason)"
    case .olderSchema(let server):
      "\(server) has no Chronicle schema with shared streams (version 6 or newer); migrate it with PostgresSchema.migrate"
    case .deviceNotRegistered(let stream, let server, let entries, let reason):
      "\(server) refused \(entries.count == 1 ? "entry \(entries.lowerBound)" : "entries \(entries.lowerBound)–\(entries.upperBound)") of stream '\(stream)': \(reason); register the device for this role with PostgresStreamServer.registerDevice"
    case .permissionDenied(let stream, let server, let step, let reason):
      "\(server) denied the role \(step) of stream '\(stream)' (\(reason)); register its device with PostgresStreamServer.registerDevice, which grants what a device needs"
    case .refused(let stream, let server, let step, let reason):
      "\(server) refused \(step) of stream '\(stream)': \(reason)"
    case .deviceTaken(let stream, let device, let role):
      "device '\(device)' of stream '\(stream)' is registered for role \(role) already; registrations are never changed, so give the device another name"
    case .unknownRole(let role, let server):
      "\(server) has no role \(role); create it first (CREATE ROLE … LOGIN), then register the device"
    case .unreachable(let stream, let server, let step, let reason):
      "\(step) of stream '\(stream)' failed: \(reason) (\(server))"
    case .closed(let stream):
      "the server of stream '\(stream)' was closed; create a new PostgresStreamServer"
    }
  }

  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}
#endif  // Postgres
