#if Postgres
import ChronicleLog
import Foundation
import PostgresNIO

// MARK: - Shipper

/// Ships a Chronicle log's new entries and checkpoints to PostgreSQL.
///
/// Each call of ``ship(_:)`` reads the server's head for the log, then sends the entries after it
/// up to the device's head as it was when the call began, in batches of ``Options/batchSize``
/// entries, each batch in one transaction (after the first, one statement, with up to
/// ``Options/batchesInFlight`` of them on the server at once, committing in order). The server
/// checks in that transaction
/// that the batch continues the stored chain (see ``PostgresSchema``), so a crash of either side
/// at any moment leaves the server at the end of a whole batch, and the next call resumes there:
/// every entry is stored exactly once. Works while an app writes the log (it reads through a
/// read-only instance).
///
/// ```swift
/// let shipper = LogShipper(client: client)
/// let report = try await shipper.ship(directory: logDirectory)
/// print("\(report.entriesShipped) entries, server head \(report.serverHead)")
/// ```
///
/// The client must be running (`client.run()` in a task) and the server must hold the schema
/// (``PostgresSchema/migrate(_:)-(PostgresClient)``): the shipper never creates or changes it.
public struct LogShipper: Sendable {
  /// How a shipper batches, and how ``follow(_:onEvent:)`` polls and retries.
  public struct Options: Sendable, Hashable {
    /// The most entries one transaction carries (clamped to 1…4,000, which bounds the memory a
    /// shipper holds: the batches in flight and the next one, read meanwhile).
    public var batchSize: Int
    /// The most batches the server stores at once, each on a connection of the client's pool of its
    /// own (clamped to 1…4). A server backend is single-threaded: with 2, the default, two backends
    /// store a log's batches side by side, where one at a time left the shipper bound by one.
    /// Batches still commit in order (docs/postgres.md, *Batches in flight*). A pool with fewer
    /// connections makes them take turns. ``follow(_:onEvent:)`` ships one at a time.
    public var batchesInFlight: Int
    /// How long ``follow(_:onEvent:)`` waits between looks at the device's head once it has
    /// shipped everything (the log has no change notification across processes).
    public var pollInterval: Duration
    /// The wait before the first retry after a failure that may pass (the server is down).
    public var firstRetryDelay: Duration
    /// The longest wait between retries: each failure in a row doubles the wait up to this.
    public var maxRetryDelay: Duration
    /// The longest one step with the server may take: getting a connection, one batch statement
    /// (with the wait for the batch before it), one small transaction. A step that takes longer is
    /// abandoned and fails with ``ServerTimedOut``: ``ship(_:)`` throws it, ``follow(_:onEvent:)``
    /// reports it as ``ShipEvent/retrying(error:attempt:delay:)`` and tries again. A connection a
    /// dying server left open, or a pool that cannot connect, therefore never stops a shipper.
    public var stepTimeout: Duration
    /// How often ``follow(_:onEvent:)`` asks the server whether it answers while the log does not
    /// change (one trivial statement), so that an outage is reported when it starts.
    public var idleCheckInterval: Duration

    /// Creates options.
    public init(
      batchSize: Int = 1_000, batchesInFlight: Int = 2, pollInterval: Duration = .milliseconds(100),
      firstRetryDelay: Duration = .milliseconds(100), maxRetryDelay: Duration = .seconds(5),
      stepTimeout: Duration = .seconds(30), idleCheckInterval: Duration = .seconds(5)
    ) {
      self.stepTimeout = stepTimeout
      self.idleCheckInterval = idleCheckInterval
      self.batchSize = batchSize
      self.batchesInFlight = batchesInFlight
      self.pollInterval = pollInterval
      self.firstRetryDelay = firstRetryDelay
      self.maxRetryDelay = maxRetryDelay
    }
  }

  /// The client the shipper uses: up to ``Options/batchesInFlight`` connections of it at a time.
  public let client: PostgresClient
  /// The options.
  public let options: Options

  /// Creates a shipper that ships through `client`.
  public init(client: PostgresClient, options: Options = Options()) {
    self.client = client
    self.options = options
  }

  /// Opens the log in `directory` read-only, ships it (see ``ship(_:)``) and closes it. An
  /// encrypted log is opened without a key: the shipper never needs one.
  public func ship(directory: URL) async throws -> ShipReport {
    try await ship(directory: directory, progress: { _ in })
  }

  /// ``ship(directory:)``, calling `progress` after each batch the server committed with what the
  /// call stored so far (``ShipReport/serverHead`` is the newest entry the server holds then).
  ///
  /// ```swift
  /// try await shipper.ship(directory: logDirectory) { report in
  ///   print("\(report.entriesShipped) entries so far, server head \(report.serverHead)")
  /// }
  /// ```
  public func ship(
    directory: URL, progress: @escaping @Sendable (ShipReport) -> Void
  ) async throws -> ShipReport {
    let log = try ActionLog(directory: directory, access: .readOnly, options: Self.readingOptions)
    defer { try? log.close() }
    return try await ship(log, progress: progress)
  }

  /// Ships the entries of `log` the server does not hold yet, up to the log's head now, then the
  /// checkpoints the log signed that the server does not hold.
  ///
  /// The entries of an encrypted log are shipped as stored: their ciphertext and clear header,
  /// never their content, even when `log` was opened with its key ring (docs/postgres.md,
  /// *Encrypted logs*).
  ///
  /// - Throws: ``ShipError`` (a fork, a truncated device log, entries the device no longer holds,
  ///   a batch or checkpoint the server refused, a missing or other schema), the log's errors, or
  ///   the server's. Whatever happens, the server holds whole batches only.
  public func ship(_ log: ActionLog) async throws -> ShipReport {
    try await ship(log, progress: { _ in })
  }

  /// ``ship(_:)``, calling `progress` after each batch the server committed with what the call
  /// stored so far.
  public func ship(_ log: ActionLog, progress: @escaping @Sendable (ShipReport) -> Void) async throws -> ShipReport {
    let shipping = try Shipping(
      log: log, client: client, batchSize: min(max(options.batchSize, 1), 4_000),
      inFlight: min(max(options.batchesInFlight, 1), 4), stepTimeout: options.stepTimeout, progress: progress)
    return try await shipping.run()
  }

  /// How the shipper opens a log itself: an encrypted one without a key, its entries read sealed.
  static var readingOptions: ActionLog.Options { ActionLog.Options(returnsSealedEntries: true) }
}

/// What one ``LogShipper/ship(_:)`` did.
public struct ShipReport: Sendable, Hashable {
  /// The log's identifier in hex.
  public var logID: String
  /// The entries stored by this call.
  public var entriesShipped: Int
  /// The transactions that stored them.
  public var batches: Int
  /// The sequence number of the newest entry the server holds now.
  public var serverHead: UInt64
  /// The checkpoints stored by this call.
  public var checkpointsShipped: Int

  /// Creates a report.
  public init(logID: String, entriesShipped: Int, batches: Int, serverHead: UInt64, checkpointsShipped: Int) {
    self.logID = logID
    self.entriesShipped = entriesShipped
    self.batches = batches
    self.serverHead = serverHead
    self.checkpointsShipped = checkpointsShipped
  }
}

// MARK: - One run

/// The state of one ``LogShipper/ship(_:)``: one log, connections of one client.
///
/// The first batch of a call is stored in a transaction that locks the log (`lockedBatch`):
/// it reads the server's head and compares the device with it. Once a batch is committed the call
/// knows the head, and every later batch is one statement in a transaction of its own
/// (``insertSQL``), up to `inFlight` of them at once, each on a connection of its own: the server's
/// work on one overlaps its work on the next. If any of them is refused (another shipper moved the
/// head, a deadlock with one), the call waits for the others and goes back to the locked path.
struct Shipping: Sendable {
  let log: ActionLog
  let client: PostgresClient
  let batchSize: Int
  /// The most batch statements on the server at once.
  let inFlight: Int
  /// The deadline of each step with the server.
  let stepTimeout: Duration
  let logID: [UInt8]
  let hex: String
  let keys: Keys
  let logger = PostgresLogging.quiet
  /// Called after each committed batch.
  let progress: @Sendable (ShipReport) -> Void

  init(
    log: ActionLog, client: PostgresClient, batchSize: Int, inFlight: Int, stepTimeout: Duration,
    progress: @escaping @Sendable (ShipReport) -> Void
  ) throws {
    guard let id = try log.logID() else { throw ShipError.noLogID(path: log.path) }
    self.log = log
    self.client = client
    self.batchSize = batchSize
    self.inFlight = inFlight
    self.stepTimeout = stepTimeout
    self.progress = progress
    self.logID = id
    self.hex = id.map { String(format: "%02x", $0) }.joined()
    self.keys = Keys(logID: id)
  }

  /// A log's advisory lock keys (``insertSQL``).
  struct Keys: Sendable {
    /// The log's: the first eight bytes of its identifier.
    var log: Int64
    /// The first of a batch's two: the first four bytes of the identifier (the second is the
    /// batch's last sequence number).
    var batch: Int32

    init(logID: [UInt8]) {
      let key = (logID + [UInt8](repeating: 0, count: 8)).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      log = Int64(bitPattern: key)
      batch = Int32(truncatingIfNeeded: key >> 32)
    }
  }

  /// What became of a batch statement.
  enum Outcome: Sendable {
    case stored
    /// The server refused the batch; its transaction rolled back. `state` is the SQLSTATE: CH001
    /// or CH002 (the batch check), 23505 (an entry already there) or 40P01 (a deadlock).
    case refused(state: String, reason: String)
  }

  func run() async throws -> ShipReport {
    try await step("checking its Chronicle schema") { [client] in try await PostgresSchema.check(client) }
    let server = try await step("registering log \(hex)") { try await self.register() }
    let deviceHead = try log.head()
    var report = ShipReport(logID: hex, entriesShipped: 0, batches: 0, serverHead: 0, checkpointsShipped: 0)
    func committed(_ batch: Batch) {
      report.entriesShipped += batch.range.count
      report.batches += 1
      report.serverHead = batch.range.upperBound
      progress(report)
    }
    // The batch after the last one sent, read and encoded while the server stores those: the
    // shipper's work and the server's overlap instead of taking turns.
    var prepared: Batch?
    func next(after batch: Batch) throws -> Batch? {
      guard batch.range.upperBound < deviceHead.seq else { return nil }
      let range = batch.range.upperBound + 1...min(batch.range.upperBound + UInt64(batchSize), deviceHead.seq)
      return try Self.batch(log, range, previous: batch.lastHash, logID: logID, hex: hex, keys: keys)
    }
    while true {
      // The locked path: the head read under the log's locks, the device compared with it.
      let locked = try await lockedBatch(device: deviceHead, reusing: prepared)
      report.serverHead = locked.serverHead
      guard let first = locked.batch else { break }
      prepared = nil
      committed(first)
      // The head is known: the statements in flight, oldest first.
      var sending: [(batch: Batch, outcome: Task<Outcome, any Error>)] = []
      var last = first
      var refused = false
      var failure: (any Error)?
      prepared = try next(after: first)
      while true {
        while !refused, failure == nil, sending.count < inFlight, let batch = prepared {
          let (client, hex) = (client, hex)
          let storing = Task {
            try await withServerDeadline(stepTimeout, "storing entries \(batch.range.lowerBound)–\(batch.range.upperBound)") {
              try await Self.insert(client, batch, hex: hex)
            }
          }
          sending.append((batch, storing))
          prepared = nil
          do { prepared = try next(after: batch) } catch { failure = error }
        }
        guard !sending.isEmpty else { break }
        let (batch, outcome) = sending.removeFirst()
        // A cancelled call (a pass of `follow` that timed out) cancels the statements in flight;
        // each rolls back or commits whole.
        let result = await withTaskCancellationHandler {
          await outcome.result
        } onCancel: { [sending] in
          outcome.cancel()
          for pending in sending { pending.outcome.cancel() }
        }
        switch result {
        case .success(.stored):
          // Batches commit in order: one stored after one refused continues what another
          // shipper stored meanwhile.
          committed(batch)
          last = batch
        case .success(.refused):
          refused = true
        case .failure(let error):
          refused = true
          failure = failure ?? error
        }
      }
      if let failure { throw failure }
      try Task.checkCancellation()
      if !refused { break }
      // Keep what was read ahead only if it continues what this call stored.
      if let batch = prepared, batch.range.lowerBound != last.range.upperBound + 1 { prepared = nil }
    }
    report.checkpointsShipped = try await shipCheckpoints(upTo: report.serverHead, server: server)
    return report
  }

  // MARK: Registration and heads

  /// Where the server's copy of a log starts, and whether it can recompute the log's roots.
  struct ServerStart: Sendable {
    /// The anchor the log had when it was first shipped: the server holds the entries after it.
    var anchor: UInt64
    /// Whether the server can recompute the roots of trees from ``anchor`` entries on: always for a
    /// log shipped from its first entry; for a compacted one, once it holds the anchor's subtree
    /// hashes (`anchor_subtrees`).
    var checksRoots: Bool
  }

  /// Records the log on the server if it is new; checks that a known log has the same origin. A
  /// log that starts after a compaction's anchor also gets the hashes of its anchor's subtrees,
  /// from which the server recomputes the roots of its checkpoints, once (when the device still
  /// has them).
  func register() async throws -> ServerStart {
    let origin = try log.origin()
    let meta = try log.meta()
    try await client.query(
      """
      INSERT INTO chronicle.logs (log_id, origin, app, created, anchor_seq, anchor_hash, head_seq, head_hash,
        format_version)
      VALUES (\(bytes(logID)), \(origin), \(meta.appID),
        'epoch'::timestamptz + \(meta.created) * interval '1 microsecond',
        \(Int64(meta.anchor.seq)), \(bytes(meta.anchor.hash)), \(Int64(meta.anchor.seq)), \(bytes(meta.anchor.hash)),
        \(Int32(meta.formatVersion)))
      ON CONFLICT (log_id) DO UPDATE SET format_version = excluded.format_version
        WHERE chronicle.logs.format_version <> excluded.format_version AND chronicle.logs.head_seq = chronicle.logs.anchor_seq
      """, logger: logger)
    let rows = try await client.query(
      "SELECT origin, anchor_seq, anchor_subtrees IS NOT NULL FROM chronicle.logs WHERE log_id = \(bytes(logID))",
      logger: logger)
    var start = ServerStart(anchor: 0, checksRoots: true)
    for try await (stored, anchor, hasSubtrees) in rows.decode((String, Int64, Bool).self) {
      guard stored == origin else { throw ShipError.originMismatch(logID: hex, server: stored, device: origin) }
      start = ServerStart(anchor: UInt64(anchor), checksRoots: anchor == 0 || hasSubtrees)
    }
    // A tree the device no longer holds (compacted past it, or never built) leaves the roots
    // unchecked: the checkpoints then stay on the device (``shipCheckpoints(upTo:server:)``).
    if !start.checksRoots, let subtrees = try? log.subtreeHashes(size: start.anchor) {
      try await client.query(
        """
        UPDATE chronicle.logs SET anchor_subtrees = \(subtrees.map { bytes($0) })
        WHERE log_id = \(bytes(logID)) AND anchor_subtrees IS NULL
        """, logger: logger)
      start.checksRoots = true
    }
    return start
  }

  /// Stores the next batch in a transaction that first takes the log's advisory lock (waiting for
  /// every batch statement of the log on the server to end, and keeping new ones out) and then
  /// locks its head, and compares the device with that head: returns the server's head it read and
  /// the batch committed after it (`nil` when the server holds the device's head as the call
  /// began); throws on a fork, a truncated device log or entries the device no longer holds. `reusing` is a batch read ahead, used if it
  /// is the one to send. A deadlock with a shipper of an older version (which locks the head before
  /// it inserts) is retried.
  func lockedBatch(
    device: ChainAnchor, reusing prepared: Batch?
  ) async throws -> (serverHead: UInt64, batch: Batch?) {
    while true {
      let attempt: (server: UInt64, batch: Batch?)? = try await step("storing the entries after its head") {
        try await client.withConnection { connection in
        try await connection.query("BEGIN", logger: logger)
        do {
          try await connection.query("SELECT pg_advisory_xact_lock(\(keys.log))", logger: logger)
          let server = try await lockedHead(connection)
          guard let previous = try await prepareBatch(connection, server: server, device: device) else {
            try await connection.query("ROLLBACK", logger: logger)
            return (server.seq, nil)
          }
          let range = server.seq + 1...min(server.seq + UInt64(batchSize), device.seq)
          // The device's own previous hash, not the server's: the server checks the link itself.
          let batch =
            if let prepared, prepared.range == range, prepared.previous == previous {
              prepared
            } else {
              try Self.batch(log, range, previous: previous, logID: logID, hex: hex, keys: keys)
            }
          switch try await Self.insert(connection, batch, hex: hex) {
          case .stored:
            try await connection.query("COMMIT", logger: logger)
            return (server.seq, batch)
          case .refused(state: "40P01", _):
            try await connection.query("ROLLBACK", logger: logger)
            return nil
          case .refused(_, let reason):
            throw ShipError.brokenLink(logID: hex, reason: reason)
          }
        } catch {
          _ = try? await connection.query("ROLLBACK", logger: logger)
          throw error
        }
        }
      }
      if let attempt { return (attempt.server, attempt.batch) }
    }
  }

  /// The server's head for the log, locking its row until the transaction ends.
  func lockedHead(_ connection: PostgresConnection) async throws -> ChainAnchor {
    let rows = try await connection.query(
      "SELECT head_seq, head_hash, anchor_seq FROM chronicle.logs WHERE log_id = \(bytes(logID)) FOR UPDATE",
      logger: logger)
    for try await (seq, hash, _) in rows.decode((Int64, ByteBuffer, Int64).self) {
      return ChainAnchor(seq: UInt64(seq), hash: Array(hash.readableBytesView))
    }
    throw ShipError.noSchema(reason: "log \(hex) vanished from chronicle.logs")
  }

  /// Compares the device with the server: returns the device's hash of the server's head entry,
  /// `nil` when there is nothing to ship; throws on a fork, a truncated device log or entries the
  /// device no longer holds.
  func prepareBatch(
    _ connection: PostgresConnection, server: ChainAnchor, device: ChainAnchor
  ) async throws -> [UInt8]? {
    if server.seq > device.seq {
      // The device ends before the server: truncated if the entries it holds agree.
      if try await serverHash(connection, device.seq) == device.hash {
        throw ShipError.truncated(logID: hex, deviceHead: device.seq, serverHead: server.seq)
      }
      throw ShipError.fork(logID: hex, seq: try await firstDifference(connection, upTo: device.seq))
    }
    let anchor = try log.meta().anchor
    if server.seq < anchor.seq {
      throw ShipError.missingEntries(logID: hex, path: log.path, from: server.seq + 1, to: anchor.seq)
    }
    // The device's entry at the server's head must be the server's.
    let deviceHash: [UInt8]
    if server.seq == anchor.seq {
      deviceHash = anchor.hash
    } else if let hash = try storedHash(server.seq) {
      deviceHash = hash
    } else {
      throw ShipError.missingEntries(logID: hex, path: log.path, from: server.seq, to: server.seq)
    }
    if deviceHash != server.hash {
      throw ShipError.fork(logID: hex, seq: try await firstDifference(connection, upTo: server.seq))
    }
    return server.seq < device.seq ? deviceHash : nil
  }

  /// The device's hash of entry `seq`, `nil` if it has none: the end of its stored value, read
  /// without opening an encrypted entry.
  func storedHash(_ seq: UInt64) throws -> [UInt8]? {
    guard let value = try log.storedValue(seq: seq), value.count >= 32 else { return nil }
    return Array(value.suffix(32))
  }

  /// The server's hash of entry `seq` (its anchor's hash when `seq` is its anchor), `nil` if it has none.
  func serverHash(_ connection: PostgresConnection, _ seq: UInt64) async throws -> [UInt8]? {
    let rows = try await connection.query(
      """
      SELECT hash FROM chronicle.entries WHERE log_id = \(bytes(logID)) AND seq = \(Int64(seq))
      UNION ALL SELECT anchor_hash FROM chronicle.logs WHERE log_id = \(bytes(logID)) AND anchor_seq = \(Int64(seq))
      """, logger: logger)
    for try await hash in rows.decode(ByteBuffer.self) { return Array(hash.readableBytesView) }
    return nil
  }

  /// The first sequence number ≤ `upper` at which the device and the server hold different
  /// entries, given that they differ at `upper`: a binary search (hash chains that differ once
  /// differ from there on).
  func firstDifference(_ connection: PostgresConnection, upTo upper: UInt64) async throws -> UInt64 {
    let first = (try log.bounds()?.lowerBound) ?? upper
    var low = max(first, 1)
    var high = upper
    guard low < high else { return max(upper, 1) }
    while low < high {
      let middle = low + (high - low) / 2
      let device = try storedHash(middle)
      if let device, try await serverHash(connection, middle) == device {
        low = middle + 1
      } else {
        high = middle
      }
    }
    return low
  }

  // MARK: Batches

  /// A batch ready to send: entries `range`, as the insert statement's parameters.
  struct Batch: Sendable {
    /// The entries' sequence numbers.
    var range: ClosedRange<UInt64>
    /// The hash the first entry links to.
    var previous: [UInt8]
    /// The last entry's hash.
    var lastHash: [UInt8]
    /// The log identifier, one array per column and the advisory lock keys (``insertSQL``).
    var binds: PostgresBindings
  }

  /// Reads entries `range` from the device, with `previous` the hash the first links to, and
  /// encodes them as ``insertSQL``'s parameters: the log identifier, then one array per column.
  /// The entries' stored bytes are copied in short read transactions and encoded after those ended
  /// (`scanCopied`), so that an app writing the log meanwhile can reuse the pages it frees. The
  /// entries of an encrypted log are read as stored, never opened, whether or not `log` holds the
  /// key ring: their clear header and key identifier, no metadata, no payload.
  static func batch(
    _ log: ActionLog, _ range: ClosedRange<UInt64>, previous first: [UInt8], logID: [UInt8], hex: String, keys: Keys
  ) throws -> Batch {
    var columns = Columns(capacity: range.count, previous: first)
    var expected = range.lowerBound
    let encrypted = log.isEncrypted
    do {
      try log.scanCopied(in: range) { view in
        if encrypted, view.sealedKeyID == nil {
          throw LogError.corruptEntry(path: log.path, seq: view.seq, reason: "stored in the clear (layout 1) in an encrypted log")
        }
        columns.append(view)
        expected = view.seq + 1
      }
    } catch {
      // What is thrown is reported unless the device no longer holds entry `expected` (a
      // compaction since the batch was planned), which is reported below.
      guard expected <= range.upperBound, try log.storedValue(seq: expected) == nil else { throw error }
    }
    guard expected > range.upperBound else {
      throw ShipError.missingEntries(logID: hex, path: log.path, from: expected, to: range.upperBound)
    }
    return Batch(
      range: range, previous: first, lastHash: columns.lastHash, binds: columns.binds(logID: logID, keys: keys))
  }

  /// A batch's columns, one array each, as ``insertSQL`` binds them after the log identifier:
  /// written in PostgreSQL's binary array format as the entries are read, with no Swift value or
  /// buffer per element.
  struct Columns {
    var seqs: ArrayColumn<Int64>, kinds: ArrayColumn<String>, flags: ArrayColumn<Int16>
    var typeNames: ArrayColumn<String>, micros: ArrayColumn<Int64>, metadata: ArrayColumn<String>
    var codecs: ArrayColumn<String>, schemaVersions: ArrayColumn<Int64>, payloads: ArrayColumn<ByteBuffer>
    var payloadJSON: ArrayColumn<String>, bodies: ArrayColumn<ByteBuffer>, hashes: ArrayColumn<ByteBuffer>
    var previousHashes: ArrayColumn<ByteBuffer>, keyIDs: ArrayColumn<Int64>
    /// The hash the next entry links to: `previous` of ``init(capacity:previous:)``, then the last
    /// entry's.
    private(set) var lastHash: [UInt8]

    init(capacity: Int, previous: [UInt8]) {
      seqs = ArrayColumn(capacity: capacity, bytesEach: 8)
      kinds = ArrayColumn(capacity: capacity, bytesEach: 6)
      flags = ArrayColumn(capacity: capacity, bytesEach: 2)
      typeNames = ArrayColumn(capacity: capacity, bytesEach: 16)
      micros = ArrayColumn(capacity: capacity, bytesEach: 8)
      metadata = ArrayColumn(capacity: capacity, bytesEach: 48)
      codecs = ArrayColumn(capacity: capacity, bytesEach: 4)
      schemaVersions = ArrayColumn(capacity: capacity, bytesEach: 8)
      payloads = ArrayColumn(capacity: capacity, bytesEach: 48)
      payloadJSON = ArrayColumn(capacity: capacity, bytesEach: 64)
      bodies = ArrayColumn(capacity: capacity, bytesEach: 128)
      hashes = ArrayColumn(capacity: capacity, bytesEach: 32)
      previousHashes = ArrayColumn(capacity: capacity, bytesEach: 32)
      keyIDs = ArrayColumn(capacity: capacity, bytesEach: 8)
      lastHash = previous
    }

    /// The entries added.
    var count: Int { seqs.count }

    /// Adds the entry `view`, which links to ``lastHash``. A sealed entry adds its clear header and
    /// key identifier; its metadata, payload and payload JSON are SQL NULL (empty, -1 for the key).
    mutating func append(_ view: EntryView) {
      seqs.append(Int64(view.seq))
      kinds.append(view.kind.description)
      flags.append(Int16(view.flags.rawValue))
      typeNames.append(view.typeName)
      micros.append(view.timestamp)
      codecs.append(view.codec.description)
      schemaVersions.append(Int64(view.schemaVersion))
      if let keyID = view.sealedKeyID {
        metadata.append("")
        payloads.append(bytes: EmptyCollection())
        payloadJSON.append("")
        keyIDs.append(Int64(keyID))
      } else {
        let payload = Array(view.payload)
        metadata.append(Shipping.metadataJSON(view.metadata) ?? "")
        payloads.append(bytes: payload)
        payloadJSON.append(Shipping.payloadJSON(payload, codec: view.codec) ?? "")
        keyIDs.append(-1)
      }
      bodies.append(bytes: view.body)
      hashes.append(bytes: view.hash)
      previousHashes.append(bytes: lastHash)
      lastHash = Array(view.hash)
    }

    /// The insert statement's parameters: ``binds(logID:)``, then the advisory lock keys.
    func binds(logID: [UInt8], keys: Keys) -> PostgresBindings {
      var binds = binds(logID: logID)
      let last = seqs.last ?? 0
      binds.append(keys.log)
      binds.append(keys.batch)
      binds.append(Int32(truncatingIfNeeded: last))
      binds.append(Int32(truncatingIfNeeded: last - Int64(seqs.count)))
      return binds
    }

    /// `logID`, then the columns (``batchRows``).
    func binds(logID: [UInt8]) -> PostgresBindings {
      var binds = PostgresBindings(capacity: 19)
      binds.append(ByteBuffer(bytes: logID))
      binds.append(seqs)
      binds.append(kinds)
      binds.append(flags)
      binds.append(typeNames)
      binds.append(micros)
      binds.append(metadata)
      binds.append(codecs)
      binds.append(schemaVersions)
      binds.append(payloads)
      binds.append(payloadJSON)
      binds.append(bodies)
      binds.append(hashes)
      binds.append(previousHashes)
      binds.append(keyIDs)
      return binds
    }
  }

  /// Runs ``insertSQL`` for `batch` through `client` (a connection of its pool).
  static func insert(_ client: PostgresClient, _ batch: Batch, hex: String) async throws -> Outcome {
    try await outcome(of: batch, hex: hex) { try await client.query($0, logger: PostgresLogging.quiet) }
  }

  /// Runs ``insertSQL`` for `batch` on `connection`, in its transaction.
  static func insert(_ connection: PostgresConnection, _ batch: Batch, hex: String) async throws -> Outcome {
    try await outcome(of: batch, hex: hex) { try await connection.query($0, logger: PostgresLogging.quiet) }
  }

  /// Runs ``insertSQL`` for `batch` with `run`: ``Outcome/stored`` or the server's refusal; any
  /// other error is thrown.
  static func outcome(
    of batch: Batch, hex: String, _ run: (PostgresQuery) async throws -> PostgresRowSequence
  ) async throws -> Outcome {
    do {
      let rows = try await run(PostgresQuery(unsafeSQL: insertSQL, binds: batch.binds))
      var stored: Int64 = 0
      for try await count in rows.decode(Int64.self) { stored = count }
      guard stored == Int64(batch.range.count) else {
        throw ShipError.brokenLink(
          logID: hex, reason: "entries \(batch.range.lowerBound) to \(batch.range.upperBound): \(stored) stored")
      }
      return .stored
    } catch let error as PSQLError {
      // CH001, CH002: the batch check; 23505: an entry already there; 40P01: a deadlock with a
      // shipper that locked the head before it inserted.
      guard let state = error.serverInfo?[.sqlState], ["CH001", "CH002", "23505", "40P01"].contains(state) else {
        throw error
      }
      return .refused(state: state, reason: error.serverInfo?[.message] ?? "\(error)")
    }
  }

  /// The statement that stores a batch: a fixed, short statement whatever the batch's size, its
  /// columns unnested on the server; the number of entries stored. The batch check (the trigger,
  /// after the rows are in) refuses it unless it continues the log's head.
  ///
  /// Its advisory locks order the batches of a log that are on the server at once:
  /// - before any row, a shared lock on the log (`$16`; ``lockedBatch(device:reusing:)``
  ///   takes it exclusively, so it never holds the head while a batch statement holds rows) and an
  ///   exclusive lock on the batch, named by its last sequence number (`$17`, `$18`);
  /// - after the rows and before the batch check, a shared lock on the batch before it (`$19`, its
  ///   last sequence number): the statement waits there until the batch before it has committed or
  ///   rolled back, so the check sees the head that batch left.
  ///
  /// `ON CONFLICT` is not needed: an entry the server already holds fails the primary key, and the
  /// batch with it (``Outcome/refused(state:reason:)``, 23505).
  static let insertSQL = """
    WITH stored AS (
      INSERT INTO chronicle.entries (log_id, seq, \(derivedColumns.map(\.column).joined(separator: ", ")),
        body, hash, previous_hash)
      SELECT $1, b.seq, \(derivedColumns.map(\.value).joined(separator: ", ")), b.body, b.hash, b.previous_hash
      FROM \(batchRows)
      WHERE (SELECT true FROM pg_advisory_xact_lock_shared($16::bigint), pg_advisory_xact_lock($17::int, $18::int))
      RETURNING 1)
    SELECT count(*) FROM stored
    HAVING pg_advisory_xact_lock_shared($17::int, ($19::int + 0 * count(*))::int)::text = ''
    """

  /// A batch's columns (``Columns/binds(logID:)``, `$2` to `$15`) as rows `b`.
  static let batchRows = """
    unnest($2::bigint[], $3::text[], $4::smallint[], $5::text[], $6::bigint[], $7::text[],
        $8::text[], $9::bigint[], $10::bytea[], $11::text[], $12::bytea[], $13::bytea[], $14::bytea[], $15::bigint[])
        AS b (seq, kind, flags, type_name, micros, metadata, codec, schema_version, payload, payload_json,
          body, hash, previous_hash, key_id)
    """

  /// The columns of `chronicle.entries` derived from an entry's bytes, each with what the server
  /// stores in it from a row of ``batchRows``: what the insert stores, and what
  /// `logtool server-verify` compares the stored columns with.
  static let derivedColumns: [(column: String, value: String)] = [
    ("kind", "b.kind"), ("flags", "b.flags"), ("type_name", "b.type_name"),
    (#""timestamp""#, "'epoch'::timestamptz + b.micros * interval '1 microsecond'"),
    ("metadata", "nullif(b.metadata, '')::jsonb"), ("codec", "b.codec"), ("schema_version", "b.schema_version"),
    ("payload", "b.payload"), ("payload_json", "nullif(b.payload_json, '')::jsonb"), ("key_id", "nullif(b.key_id, -1)"),
  ]

  /// The metadata as a JSON object, `nil` if PostgreSQL's jsonb cannot hold it (a NUL character).
  /// jsonb orders the keys itself, so the order they are written in does not matter.
  static func metadataJSON(_ metadata: [String: String]) -> String? {
    if metadata.isEmpty { return "{}" }
    // The log's own JSON writer, as every JSON text of the log is written (a tenth of the cost of
    // `JSONEncoder` per entry).
    var json = JSONWriter()
    json.beginObject()
    for (key, value) in metadata { json.field(key, value) }
    json.endObject()
    return jsonbSafe(json.text)
  }

  /// The payload rendered as JSON, `nil` if it does not render or jsonb cannot hold it.
  static func payloadJSON(_ payload: [UInt8], codec: PayloadCodec) -> String? {
    guard let text = try? codec.renderJSON(payload) else { return nil }
    return jsonbSafe(text)
  }

  /// `text`, or `nil` if it escapes a NUL character (`\u0000`), which jsonb refuses. A scan of the
  /// contiguous bytes: Foundation's `contains` took a tenth of the shipper's time, and walking
  /// `String.UTF8View` by its indices still a tenth.
  static func jsonbSafe(_ text: String) -> String? {
    var text = text
    let escapesNUL = text.withUTF8 { bytes -> Bool in
      let escape: StaticString = "\\u0000"
      let count = escape.utf8CodeUnitCount
      guard bytes.count >= count else { return false }
      return escape.withUTF8Buffer { escape in
        for start in 0...(bytes.count - count) where bytes[start] == escape[0] {
          if memcmp(bytes.baseAddress! + start, escape.baseAddress!, count) == 0 { return true }
        }
        return false
      }
    }
    return escapesNUL ? nil : text
  }

  // MARK: Checkpoints

  /// Stores the log's checkpoints of at most `head` entries that the server does not hold yet and
  /// can check; returns how many. A checkpoint older than the first entry the server holds (a log
  /// compacted before it was first shipped) stays on the device: the server could not recompute its
  /// root.
  func shipCheckpoints(upTo head: UInt64, server: ServerStart) async throws -> Int {
    let notes = try log.checkpoints()
    guard !notes.isEmpty, server.checksRoots else { return 0 }
    let known = try await step("reading its checkpoints") {
      var known: Set<UInt64> = []
      let rows = try await client.query(
        "SELECT size FROM chronicle.checkpoints WHERE log_id = \(bytes(logID))", logger: logger)
      for try await size in rows.decode(Int64.self) { known.insert(UInt64(size)) }
      return known
    }
    var shipped = 0
    for note in notes {
      let checkpoint = try Checkpoint(parsing: note.text)
      guard checkpoint.size <= head, checkpoint.size >= server.anchor, !known.contains(checkpoint.size) else { continue }
      let text = String(decoding: note.formatted, as: UTF8.self)
      do {
        try await step("storing the checkpoint of size \(checkpoint.size)") {
          try await client.query(
            """
            INSERT INTO chronicle.checkpoints (log_id, size, root, note)
            VALUES (\(bytes(logID)), \(Int64(checkpoint.size)), \(bytes(checkpoint.rootHash)), \(text))
            """, logger: logger)
        }
      } catch let error as PSQLError {
        if let state = error.serverInfo?[.sqlState], state == "CH004" || state == "CH005" {
          throw ShipError.checkpointRefused(
            logID: hex, size: checkpoint.size, reason: error.serverInfo?[.message] ?? "\(error)")
        }
        throw error
      }
      shipped += 1
    }
    return shipped
  }

  // MARK: Helpers

  /// Runs `body`, one step with the server, within ``stepTimeout`` (``ServerTimedOut`` after it).
  @discardableResult
  func step<T: Sendable>(
    _ what: @autoclosure () -> String, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    try await withServerDeadline(stepTimeout, what(), body)
  }

  func bytes(_ value: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: value) }
}

// MARK: - Array parameters

/// A one-dimensional array parameter without NULLs, written element by element in PostgreSQL's
/// binary array format (`array_recv`: dimensions, flags, element type, length and lower bound, then
/// each element's length and bytes), so that a batch's column is one buffer rather than an array of
/// Swift values that postgres-nio then copies.
struct ArrayColumn<Element: PostgresArrayEncodable>: PostgresNonThrowingEncodable, Sendable {
  /// The elements so far.
  private(set) var count = 0
  /// The last `int8` element appended: the batch's last sequence number.
  private(set) var last: Int64?
  private var elements: ByteBuffer

  /// An empty column with room for `capacity` elements of about `bytesEach` bytes.
  init(capacity: Int, bytesEach: Int) {
    elements = ByteBufferAllocator().buffer(capacity: capacity * (4 + bytesEach))
  }

  static var psqlType: PostgresDataType { Element.psqlArrayType }
  static var psqlFormat: PostgresFormat { .binary }

  /// Appends an element whose binary form is `bytes` (`bytea` as is; `text` as UTF-8).
  mutating func append(bytes: some Collection<UInt8>) {
    elements.writeInteger(Int32(bytes.count))
    elements.writeBytes(bytes)
    count += 1
  }

  /// Appends a `text` element.
  mutating func append(_ text: String) where Element == String {
    var text = text
    text.withUTF8 { append(bytes: $0) }
  }

  /// Appends an `int8` element.
  mutating func append(_ value: Int64) where Element == Int64 {
    elements.writeInteger(Int32(8))
    elements.writeInteger(value)
    count += 1
    last = value
  }

  /// Appends an `int2` element.
  mutating func append(_ value: Int16) where Element == Int16 {
    elements.writeInteger(Int32(2))
    elements.writeInteger(value)
    count += 1
  }

  func encode<JSONEncoder: PostgresJSONEncoder>(
    into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
  ) {
    buffer.writeInteger(Int32(count == 0 ? 0 : 1))  // dimensions
    buffer.writeInteger(Int32(0))  // flags: no NULLs
    buffer.writeInteger(Element.psqlType.rawValue)
    guard count > 0 else { return }
    buffer.writeInteger(Int32(count))  // length
    buffer.writeInteger(Int32(1))  // lower bound
    buffer.writeImmutableBuffer(elements)
  }
}
#endif  // Postgres
