#if Postgres
import ChronicleLog
import Foundation
import PostgresNIO

// MARK: - Creating streams and registering devices

extension PostgresStreamServer {
  /// Creates `stream` on the server: its row in `chronicle.logs`, marked shared, empty (anchor and
  /// head 0 with the genesis hash), its entries sealed if `encrypted`. Run by the schema's owner
  /// (the role that ran ``PostgresSchema/migrate(_:)-(PostgresClient)``), once; running it again is
  /// harmless.
  ///
  /// - Throws: ``PostgresStreamError/notAStream(stream:server:)`` if a shipped log has the stream's
  ///   identifier; ``PostgresStreamError/streamMismatch(stream:server:reason:)`` if the stream exists
  ///   with another origin or encryption; ``ShipError`` if the server's schema is missing, older or
  ///   newer; ``ServerTimedOut`` past `timeout`.
  public static func createStream(
    _ stream: SharedStream, encrypted: Bool, on client: PostgresClient, timeout: Duration = .seconds(30)
  ) async throws {
    guard !stream.name.isEmpty else { throw PostgresStreamError.invalidArgument(reason: "a stream's name cannot be empty") }
    let server = "the server"
    let step = "creating the stream"
    let stored: (origin: String, shared: Bool, format: Int32)? = try await admin(step, stream, timeout) {
      try await PostgresSchema.check(client)
      let id = ByteBuffer(bytes: stream.id)
      let genesis = ByteBuffer(bytes: ChainAnchor.genesis.hash)
      try await client.query(
        """
        INSERT INTO chronicle.logs (log_id, origin, app, created, anchor_seq, anchor_hash, head_seq, head_hash,
          format_version, shared)
        VALUES (\(id), \(stream.origin), \(stream.name), now(), 0, \(genesis), 0, \(genesis),
          \(Int32(encrypted ? 2 : 1)), true)
        ON CONFLICT (log_id) DO NOTHING
        """, logger: PostgresLogging.quiet)
      let rows = try await client.query(
        "SELECT origin, shared, format_version FROM chronicle.logs WHERE log_id = \(id)", logger: PostgresLogging.quiet)
      var stored: (origin: String, shared: Bool, format: Int32)?
      for try await row in rows.decode((String, Bool, Int32).self) { stored = (row.0, row.1, row.2) }
      return stored
    }
    guard let stored else { throw PostgresStreamError.unknownStream(stream: stream.name, server: server) }
    guard stored.shared else { throw PostgresStreamError.notAStream(stream: stream.name, server: server) }
    guard stored.origin == stream.origin else {
      throw PostgresStreamError.streamMismatch(
        stream: stream.name, server: server, reason: "under the origin '\(stored.origin)', not '\(stream.origin)'")
    }
    guard (stored.format >= 2) == encrypted else {
      throw PostgresStreamError.streamMismatch(
        stream: stream.name, server: server,
        reason: encrypted ? "in the clear, and cannot become encrypted" : "encrypted, and cannot become clear")
    }
  }

  /// Registers `device` of `stream` for the database role `role`, and grants the role what a
  /// device needs and nothing more: `USAGE` on the schema `chronicle`; `SELECT` on
  /// `chronicle.logs`, `chronicle.entries`, `chronicle.checkpoints` and `chronicle.stream_devices`;
  /// `INSERT` on every column of `chronicle.entries` but `appended_by` (which the server fills with
  /// the role, so a device cannot name another), and on `chronicle.checkpoints`. From then on the
  /// schema's check lets that role, and only it, append entries of that device to the stream.
  ///
  /// Run by the schema's owner, in one transaction. The role must exist: creating it (`CREATE ROLE
  /// … LOGIN`, with its password or certificate) is the database administrator's job. A device is
  /// registered once, for one role (the registrations are append-only); registering it again for
  /// the same role is harmless. One role may append as several devices.
  ///
  /// - Throws: ``PostgresStreamError/unknownStream(stream:server:)``,
  ///   ``PostgresStreamError/unknownRole(role:server:)``,
  ///   ``PostgresStreamError/deviceTaken(stream:device:role:)``, or ``ServerTimedOut`` past `timeout`.
  public static func registerDevice(
    _ device: String, role: String, in stream: SharedStream, on client: PostgresClient,
    timeout: Duration = .seconds(30)
  ) async throws {
    guard !device.isEmpty else { throw PostgresStreamError.invalidArgument(reason: "a device's name cannot be empty") }
    guard !role.isEmpty, !role.utf8.contains(0), role.utf8.count <= 63 else {
      throw PostgresStreamError.invalidArgument(
        reason: "'\(role)' cannot be a PostgreSQL role name (1 to 63 bytes, without NUL)")
    }
    let server = "the server"
    let outcome: Registration = try await admin("registering device '\(device)'", stream, timeout) {
      try await client.withConnection { connection in
        let logger = PostgresLogging.quiet
        let id = ByteBuffer(bytes: stream.id)
        try await connection.query("BEGIN", logger: logger)
        do {
          let outcome = try await register(connection, id: id, device: device, role: role)
          try await connection.query(outcome == nil ? "COMMIT" : "ROLLBACK", logger: logger)
          return outcome ?? .registered
        } catch {
          _ = try? await connection.query("ROLLBACK", logger: logger)
          throw error
        }
      }
    }
    switch outcome {
    case .registered: return
    case .noStream: throw PostgresStreamError.unknownStream(stream: stream.name, server: server)
    case .notShared: throw PostgresStreamError.notAStream(stream: stream.name, server: server)
    case .noRole: throw PostgresStreamError.unknownRole(role: role, server: server)
    case .taken(let other): throw PostgresStreamError.deviceTaken(stream: stream.name, device: device, role: other)
    }
  }

  /// Puts back the entries a server restored from an older backup lost, from a device's copy of
  /// the stream in `directory` (the one with the most entries): the copy's entries after the
  /// server's head, byte for byte, as the devices that appended them, in batches of 1,000. Run by
  /// the schema's owner, whom the schema's check lets append as any registered device. The
  /// devices can then sync again (`SyncError.serverBehind` says when one is needed).
  ///
  /// - Parameters:
  ///   - stream: the stream whose entries the server lost.
  ///   - directory: a device's copy of the stream, which may be open by its app meanwhile.
  ///   - keyRing: the stream's keys, for an encrypted stream (the devices' names are sealed in the
  ///     entries' metadata).
  ///   - client: a client connected as the schema's owner.
  /// - Returns: the number of entries put back (0 when the server holds the copy's head).
  /// - Throws: ``PostgresStreamError/streamMismatch(stream:server:reason:)`` when the copy is
  ///   not one of this stream, or the server's entries do not lead to the copy's (a fork: nothing
  ///   is written); the copy's or the server's errors.
  @discardableResult
  public static func restore(
    _ stream: SharedStream, from directory: URL, keyRing: KeyRing? = nil, on client: PostgresClient
  ) async throws -> Int {
    let copy = try ActionLog(directory: directory, access: .readOnly, options: .init(keyRing: keyRing))
    defer { try? copy.close() }
    guard try copy.logID() == stream.id else {
      throw PostgresStreamError.streamMismatch(
        stream: stream.name, server: "the server", reason: "\(copy.path) is not a copy of it")
    }
    // It never listens: no connection to give back.
    let server = PostgresStreamServer(client: client, stream: stream)
    var head = try await server.serverHead()
    let copyHead = try copy.head().seq
    guard head.seq <= copyHead else { return 0 }
    if head.seq > 0, try copy.storedValue(seq: head.seq).map({ Array($0.suffix(32)) }) != head.hash {
      throw PostgresStreamError.streamMismatch(
        stream: stream.name, server: "the server",
        reason: "its entry \(head.seq) is not the one \(copy.path) holds: the histories forked, nothing was put back")
    }
    var restored = 0
    while head.seq < copyHead {
      let range = (head.seq + 1)...min(head.seq + 1_000, copyHead)
      let records = try range.map { seq in
        guard let value = try copy.storedValue(seq: seq), let device = try copy.record(at: seq)?.metadata[SharedStreamLayout.deviceKey]
        else {
          throw PostgresStreamError.invalidRecord(
            stream: stream.name, seq: seq, reason: "entry \(seq) of \(copy.path) names no device (is its key ring missing?)")
        }
        return StreamRecord(seq: seq, body: Array(value.dropLast(32)), hash: Array(value.suffix(32)), device: device)
      }
      guard try await server.append(records, previousHash: head.hash) else {
        throw PostgresStreamError.streamMismatch(
          stream: stream.name, server: "the server", reason: "a device appended while it was being restored; run it again")
      }
      restored += records.count
      head = ChainAnchor(seq: range.upperBound, hash: records[records.count - 1].hash)
    }
    return restored
  }

  /// What a registration found.
  private enum Registration: Sendable {
    case registered, noStream, notShared, noRole
    case taken(String)
  }

  /// In the transaction on `connection`: `nil` once registered and granted, else why not.
  private static func register(
    _ connection: PostgresConnection, id: ByteBuffer, device: String, role: String
  ) async throws -> Registration? {
    let logger = PostgresLogging.quiet
    var shared: Bool?
    for try await value in try await connection.query(
      "SELECT shared FROM chronicle.logs WHERE log_id = \(id) FOR SHARE", logger: logger
    ).decode(Bool.self) { shared = value }
    guard let shared else { return .noStream }
    guard shared else { return .notShared }
    var exists = false
    for try await _ in try await connection.query(
      "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = \(role)", logger: logger
    ).decode(Int32.self) { exists = true }
    guard exists else { return .noRole }
    try await connection.query(
      """
      INSERT INTO chronicle.stream_devices (log_id, device, role) VALUES (\(id), \(device), \(role))
      ON CONFLICT (log_id, device) DO NOTHING
      """, logger: logger)
    var registered = role
    for try await value in try await connection.query(
      "SELECT role::text FROM chronicle.stream_devices WHERE log_id = \(id) AND device = \(device)", logger: logger
    ).decode(String.self) { registered = value }
    guard registered == role else { return .taken(registered) }
    for grant in grants(to: role) { try await connection.query(PostgresQuery(unsafeSQL: grant), logger: logger) }
    return nil
  }

  /// The statements that grant `role` what a device needs (``registerDevice(_:role:in:on:timeout:)``).
  static func grants(to role: String) -> [String] {
    let quoted = "\"" + role.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    let columns = ["log_id", "seq"] + Shipping.derivedColumns.map(\.column) + ["body", "hash", "previous_hash", "device"]
    return [
      "GRANT USAGE ON SCHEMA chronicle TO \(quoted)",
      "GRANT SELECT ON chronicle.logs, chronicle.entries, chronicle.checkpoints, chronicle.stream_devices TO \(quoted)",
      "GRANT INSERT (\(columns.joined(separator: ", "))) ON chronicle.entries TO \(quoted)",
      "GRANT INSERT ON chronicle.checkpoints TO \(quoted)",
    ]
  }

  /// Runs `body`, an administration step of `stream`, within `timeout`, its errors as
  /// ``PostgresStreamError``.
  private static func admin<T: Sendable>(
    _ step: String, _ stream: SharedStream, _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    do {
      return try await withServerDeadline(timeout, "\(step) of stream '\(stream.name)' on the server", body)
    } catch {
      throw failure(error, step: step, stream: stream.name, server: "the server")
    }
  }
}
#endif  // Postgres
