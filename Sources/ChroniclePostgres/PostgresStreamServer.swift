#if Postgres
import ChronicleLog
import Foundation
import PostgresNIO
import Synchronization

// MARK: - The server of a shared stream

/// A shared stream kept in PostgreSQL: the ``/ChronicleLog/StreamServer`` that a device's shared
/// store syncs through.
///
/// The stream is a log of the Chronicle schema (``PostgresSchema``, version 6 or newer) marked
/// shared: its row in `chronicle.logs` (identifier ``/ChronicleLog/SharedStream/id``, origin
/// ``/ChronicleLog/SharedStream/origin``, app the stream's name) and its entries in
/// `chronicle.entries`, each with the device that appended it. The schema's checks order it: a
/// batch is stored only if it continues the stream's head without a gap and links to it, and only
/// if each entry's device is registered for the database role that inserts it
/// (``registerDevice(_:role:in:on:timeout:)``). Every step with the server has a deadline
/// (``Options/stepTimeout``).
///
/// The schema's owner creates the stream and registers each device's role once:
///
/// ```swift
/// let stream = SharedStream("expenses")
/// try await PostgresStreamServer.createStream(stream, encrypted: false, on: ownerClient)
/// try await PostgresStreamServer.registerDevice("ann-phone", role: "ann_phone", in: stream, on: ownerClient)
/// ```
///
/// and each device connects as its role:
///
/// ```swift
/// let server = PostgresStreamServer(client: deviceClient, stream: stream)
/// let records = try await server.records(after: 0, limit: 500)
/// // …
/// await server.close()
/// ```
///
/// ``waitForRecords(after:timeout:)`` listens for the schema's notification `chronicle_entries` on
/// one connection of the client's pool, which it keeps from its first call until ``close()``; the
/// connection is opened again after a failure (the server restarted), and the head is read again
/// each time it is, so no append is missed.
public final class PostgresStreamServer: StreamServer, Sendable {
  /// How a stream's server names its server in messages and how long its steps may take.
  public struct Options: Sendable, Hashable {
    /// The longest one step with the server may take (getting a connection and running one
    /// statement); past it the step fails with ``ServerTimedOut``.
    public var stepTimeout: Duration
    /// How often the listening connection is checked while no notification comes (one small query),
    /// so that a connection a dying server or network left open is replaced.
    public var listenerCheckInterval: Duration
    /// The wait before the listening connection is opened again after a failure; doubled after each
    /// failure in a row, up to ``maxRetryDelay``.
    public var firstRetryDelay: Duration
    /// The longest wait between two attempts to open the listening connection.
    public var maxRetryDelay: Duration
    /// How messages name the server, for example `db.example.com:5432`.
    public var serverName: String

    /// Creates options.
    public init(
      stepTimeout: Duration = .seconds(30), listenerCheckInterval: Duration = .seconds(10),
      firstRetryDelay: Duration = .milliseconds(100), maxRetryDelay: Duration = .seconds(5),
      serverName: String = "the server"
    ) {
      self.stepTimeout = stepTimeout
      self.listenerCheckInterval = listenerCheckInterval
      self.firstRetryDelay = firstRetryDelay
      self.maxRetryDelay = maxRetryDelay
      self.serverName = serverName
    }
  }

  /// The client the server uses (running: `client.run()` in a task), connected as the device's role.
  public let client: PostgresClient
  /// The stream.
  public let stream: SharedStream
  /// The options.
  public let options: Options
  /// What the server holds about the stream, once read.
  private let known = Mutex<StreamInfo?>(nil)
  /// The notifications' listener, started by the first wait.
  private let listener: StreamListener

  /// Creates the server of `stream` through `client` (which must be running). Nothing is sent
  /// until the first call.
  public init(client: PostgresClient, stream: SharedStream, options: Options = Options()) {
    self.client = client
    self.stream = stream
    self.options = options
    self.listener = StreamListener(client: client, stream: stream, options: options)
  }

  deinit { listener.stop() }

  /// The stream's entries after `seq`, in order, at most `limit` of them (fewer at the head).
  ///
  /// - Throws: ``PostgresStreamError`` (an unknown stream, a role without the right to read it, a
  ///   server that cannot be reached) or ``ServerTimedOut``.
  public func records(after seq: UInt64, limit: Int) async throws -> [StreamRecord] {
    guard limit > 0 else { return [] }
    _ = try await streamInfo()
    let step = "reading the entries after \(seq)"
    return try await run(step) { [client, stream] in
      let rows = try await client.query(
        """
        SELECT seq, body, hash, device FROM chronicle.entries
        WHERE log_id = \(ByteBuffer(bytes: stream.id)) AND seq > \(Int64(clamping: seq))
        ORDER BY seq LIMIT \(Int64(limit))
        """, logger: PostgresLogging.quiet)
      var records: [StreamRecord] = []
      records.reserveCapacity(min(limit, 1_000))
      for try await (seq, body, hash, device) in rows.decode((Int64, ByteBuffer, ByteBuffer, String?).self) {
        records.append(
          StreamRecord(
            seq: UInt64(seq), body: Array(body.readableBytesView), hash: Array(hash.readableBytesView),
            device: device ?? ""))
      }
      return records
    }
  }

  /// The stream's head on the server: its last entry's sequence number and hash (0 and the genesis
  /// hash while it is empty).
  func serverHead() async throws -> ChainAnchor {
    _ = try await streamInfo()
    return try await run("reading the stream's head") { [client, stream] in
      let rows = try await client.query(
        "SELECT head_seq, head_hash FROM chronicle.logs WHERE log_id = \(ByteBuffer(bytes: stream.id))",
        logger: PostgresLogging.quiet)
      var head = ChainAnchor.genesis
      for try await (seq, hash) in rows.decode((Int64, ByteBuffer).self) {
        head = ChainAnchor(seq: UInt64(seq), hash: Array(hash.readableBytesView))
      }
      return head
    }
  }

  /// Appends `records` in one statement, one transaction, with each record's device; the server
  /// stores every column a shipped entry has (decoded from each body here, as ``LogShipper`` does:
  /// for an encrypted stream the sealed bytes, the clear type name and the key identifier).
  ///
  /// - Returns: `true` when they were appended; `false`, with nothing written, when the stream's head
  ///   is no longer `records[0].seq - 1` (the schema's check refused the batch as a gap, SQLSTATE
  ///   CH001, or another device's entry took one of its sequence numbers first, 23505).
  /// - Throws: ``PostgresStreamError/invalidRecord(stream:seq:reason:)`` before anything is sent;
  ///   ``PostgresStreamError/deviceNotRegistered(stream:server:entries:reason:)`` (CH006),
  ///   ``PostgresStreamError/refused(stream:server:step:reason:)`` (a record that does not link,
  ///   CH002), ``PostgresStreamError/permissionDenied(stream:server:step:reason:)``, and
  ///   ``PostgresStreamError/unreachable(stream:server:step:reason:)`` or ``ServerTimedOut`` when
  ///   the server did not answer: the records may then have been appended or not, which the
  ///   stream's entries tell.
  public func append(_ records: [StreamRecord], previousHash: [UInt8]) async throws -> Bool {
    guard let first = records.first, let last = records.last else { return true }
    let info = try await streamInfo()
    let binds = try insertBinds(records, previousHash: previousHash, encrypted: info.encrypted)
    let range = first.seq...max(first.seq, last.seq)
    let step = range.count == 1 ? "appending entry \(range.lowerBound)" : "appending entries \(range.lowerBound)–\(range.upperBound)"
    return try await run(step, entries: range) { [client] in
      do {
        let rows = try await client.query(
          PostgresQuery(unsafeSQL: Self.insertSQL, binds: binds), logger: PostgresLogging.quiet)
        for try await _ in rows.decode(Int64.self) {}
        return true
      } catch let error as PSQLError {
        // CH001: the batch does not continue the head; 23505: an entry of another device holds
        // one of its sequence numbers; 40P01, 40001: two appends collided (the server rolled one
        // back). The stream moved on: the device reads it again.
        if let state = error.serverInfo?[.sqlState], ["CH001", "23505", "40P01", "40001"].contains(state) {
          return false
        }
        throw error
      }
    }
  }

  /// Returns as soon as the schema's notification says the stream holds entries after `seq` (or the
  /// stream's head is past `seq` already), or once `timeout` has passed.
  ///
  /// The first call starts listening on a connection of the client's pool, kept until ``close()``;
  /// once `LISTEN` is active the stream's head is read, so an append between the device's last read
  /// and the listening is not missed. While the server cannot be reached, the call returns at its
  /// timeout.
  ///
  /// - Throws: `CancellationError` when the calling task is cancelled;
  ///   ``PostgresStreamError/closed(stream:)`` after ``close()``.
  public func waitForRecords(after seq: UInt64, timeout: Duration) async throws {
    try listener.start()
    try await listener.wait(after: seq, timeout: timeout)
  }

  /// Stops listening: the listening connection goes back to the client's pool, the waits in progress
  /// return, and later ones throw ``PostgresStreamError/closed(stream:)``. Returns once the listener's
  /// task has ended. ``records(after:limit:)`` and ``append(_:previousHash:)`` keep working.
  public func close() async {
    await listener.close()
  }

  /// Whether the notifications of the stream are listened for now (`LISTEN` active, the head read).
  public var isListening: Bool { listener.isListening }

  // MARK: The stream's row

  /// What the server holds about a stream.
  struct StreamInfo: Sendable {
    /// Whether its entries are sealed (format version 2).
    var encrypted: Bool
  }

  /// The stream's row, read once: refuses an unknown stream, a shipped log and an older schema.
  func streamInfo() async throws -> StreamInfo {
    if let info = known.withLock({ $0 }) { return info }
    let found = try await run("reading the stream's row") { [client, stream] in
      let rows = try await client.query(
        "SELECT shared, format_version FROM chronicle.logs WHERE log_id = \(ByteBuffer(bytes: stream.id))",
        logger: PostgresLogging.quiet)
      var found: (shared: Bool, format: Int32)?
      for try await row in rows.decode((Bool, Int32).self) { found = (row.0, row.1) }
      return found
    }
    guard let found else { throw PostgresStreamError.unknownStream(stream: stream.name, server: options.serverName) }
    guard found.shared else { throw PostgresStreamError.notAStream(stream: stream.name, server: options.serverName) }
    let info = StreamInfo(encrypted: found.format >= 2)
    known.withLock { $0 = info }
    return info
  }

  // MARK: The insert

  /// The statement that appends a batch: the shipper's columns (``Shipping/batchRows``, `$1` to
  /// `$15`) and each entry's device (`$16`), unnested on the server; the number of entries stored.
  static let insertSQL = """
    WITH stored AS (
      INSERT INTO chronicle.entries (log_id, seq, \(Shipping.derivedColumns.map(\.column).joined(separator: ", ")),
        body, hash, previous_hash, device)
      SELECT $1, b.seq, \(Shipping.derivedColumns.map(\.value).joined(separator: ", ")), b.body, b.hash,
        b.previous_hash, b.device
      FROM unnest($2::bigint[], $3::text[], $4::smallint[], $5::text[], $6::bigint[], $7::text[],
          $8::text[], $9::bigint[], $10::bytea[], $11::text[], $12::bytea[], $13::bytea[], $14::bytea[], $15::bigint[],
          $16::text[])
        AS b (seq, kind, flags, type_name, micros, metadata, codec, schema_version, payload, payload_json,
          body, hash, previous_hash, key_id, device)
      RETURNING 1)
    SELECT count(*) FROM stored
    """

  /// The insert's parameters for `records`: each body parsed as the entry it is, its columns as the
  /// shipper writes them; throws ``PostgresStreamError/invalidRecord(stream:seq:reason:)`` for the
  /// first record that is not an entry this stream can hold.
  func insertBinds(_ records: [StreamRecord], previousHash: [UInt8], encrypted: Bool) throws -> PostgresBindings {
    func invalid(_ seq: UInt64, _ reason: String) -> PostgresStreamError {
      .invalidRecord(stream: stream.name, seq: seq, reason: reason)
    }
    guard previousHash.count == 32, let first = records.first else {
      throw invalid(records.first?.seq ?? 0, "the previous hash has \(previousHash.count) bytes, not 32")
    }
    guard first.seq >= 1 else { throw invalid(0, "sequence numbers start at 1") }
    var columns = Shipping.Columns(capacity: records.count, previous: previousHash)
    var devices = ArrayColumn<String>(capacity: records.count, bytesEach: 16)
    for (offset, record) in records.enumerated() {
      guard record.seq == first.seq + UInt64(offset) else {
        throw invalid(record.seq, "it follows entry \(first.seq + UInt64(offset) - 1) in the batch: the records must be consecutive")
      }
      guard record.hash.count == 32 else { throw invalid(record.seq, "its hash has \(record.hash.count) bytes, not 32") }
      guard !record.device.isEmpty else { throw invalid(record.seq, "it names no device") }
      let value = record.body + record.hash
      try value.withUnsafeBytes { value in
        let view: EntryView
        do { view = try EntryView.parse(storedValue: value, seq: record.seq) } catch {
          throw invalid(record.seq, "its bytes are not an entry (\(error))")
        }
        if encrypted != (view.sealedKeyID != nil) {
          throw invalid(
            record.seq,
            encrypted
              ? "it is stored in the clear and the stream is encrypted" : "it is sealed and the stream is in the clear")
        }
        columns.append(view)
      }
      devices.append(record.device)
    }
    var binds = columns.binds(logID: stream.id)
    binds.append(devices)
    return binds
  }

  // MARK: Steps

  /// Runs `body`, one step with the server, within ``Options/stepTimeout``; turns the server's and
  /// the connection's errors into ``PostgresStreamError`` (``ServerTimedOut`` and cancellation pass).
  /// `entries` are the sequence numbers the step appends, if it does.
  func run<T: Sendable>(
    _ step: String, entries: ClosedRange<UInt64>? = nil, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    do {
      return try await withServerDeadline(
        options.stepTimeout, "\(step) of stream '\(stream.name)' on \(options.serverName)", body)
    } catch {
      throw Self.failure(error, step: step, entries: entries, stream: stream.name, server: options.serverName)
    }
  }

  /// `error` of `step` as ``PostgresStreamError``: a refusal of the server by its SQLSTATE, anything
  /// else of postgres-nio as a connection failure in plain words. Other errors are returned as they are.
  static func failure(
    _ error: any Error, step: String, entries: ClosedRange<UInt64>? = nil, stream: String, server: String
  ) -> any Error {
    guard let error = error as? PSQLError else { return error }
    guard let state = error.serverInfo?[.sqlState] else {
      return PostgresStreamError.unreachable(stream: stream, server: server, step: step, reason: LogShipper.describe(error))
    }
    let message = error.serverInfo?[.message] ?? "SQLSTATE \(state)"
    if state == "CH006", let entries {
      return PostgresStreamError.deviceNotRegistered(stream: stream, server: server, entries: entries, reason: message)
    }
    switch state {
    case "42501":
      return PostgresStreamError.permissionDenied(stream: stream, server: server, step: step, reason: message)
    case "42703", "42P01", "3F000":
      // An undefined column, table or schema: the server's schema predates shared streams.
      return PostgresStreamError.olderSchema(server: server)
    default:
      return PostgresStreamError.refused(stream: stream, server: server, step: step, reason: "\(message) (SQLSTATE \(state))")
    }
  }
}
#endif  // Postgres
