import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Testing

// MARK: - The server's own checks

/// What the server refuses whoever writes: the schema's triggers, not the shipper, keep the chain.
@Suite(.needsPostgres) struct ServerCheckTests {
  /// Inserts entry `seq` of `log` as a client other than the shipper would, with `previous` as its
  /// previous hash and `body` (default: the entry's own bytes).
  func insert(
    _ client: PostgresClient, _ log: ActionLog, seq: UInt64, previous: [UInt8], body: [UInt8]? = nil
  ) async throws {
    let value = try #require(try log.storedValue(seq: seq))
    let entry = try #require(try log.record(at: seq))
    let id = try #require(try log.logID())
    try await client.query(
      """
      INSERT INTO chronicle.entries (log_id, seq, kind, flags, type_name, "timestamp", codec, schema_version,
        payload, body, hash, previous_hash)
      VALUES (\(bytea(id)), \(Int64(seq)), 'action', 0, \(entry.typeName), now(), 'json', 1,
        \(bytea(entry.payload)), \(bytea(body ?? Array(value.dropLast(32)))), \(bytea(entry.hash)), \(bytea(previous)))
      """, logger: quietLogger)
  }

  /// Ships the first `shipped` of `total` entries; returns the log's directory.
  func shipPrefix(_ client: PostgresClient, _ device: TestLog, shipped: Int, total: Int) async throws {
    try device.append(shipped)
    let prefix = try device.copy(named: "prefix")
    try device.append(total - shipped)
    _ = try await LogShipper(client: client).ship(directory: prefix)
  }

  @Test func aBatchThatDoesNotLinkIsRefusedAndTheLogStaysUnchanged() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try await withDatabase { client, _ in
      try await shipPrefix(client, device, shipped: 10, total: 13)
      let log = try ActionLog(directory: device.url, access: .readOnly)
      defer { try? log.close() }
      let head = try #require(try log.record(at: 10)).hash
      let snapshot = "SELECT string_agg(encode(hash, 'hex'), ',' ORDER BY seq) FROM chronicle.entries"
      let before = try await value(client, PostgresQuery(unsafeSQL: snapshot), as: String.self)

      // A wrong previous hash, a gap, a body that is not the hash's, an entry the server holds.
      var wrong = head
      wrong[0] ^= 1
      var tampered = Array(try #require(try log.storedValue(seq: 11)).dropLast(32))
      tampered[tampered.count - 1] ^= 1
      let attempts: [(String, () async throws -> Void)] = [
        ("CH002", { try await self.insert(client, log, seq: 11, previous: wrong) }),
        ("CH001", { try await self.insert(client, log, seq: 12, previous: try log.record(at: 11)!.hash) }),
        ("CH002", { try await self.insert(client, log, seq: 11, previous: head, body: tampered) }),
        ("23505", { try await self.insert(client, log, seq: 10, previous: try log.record(at: 9)!.hash) }),
      ]
      for (state, attempt) in attempts {
        let error = await #expect(throws: PSQLError.self) { try await attempt() }
        #expect(error.flatMap(sqlState) == state)
      }
      #expect(try await value(client, PostgresQuery(unsafeSQL: snapshot), as: String.self) == before)
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 10)

      // The right entry is taken, and moves the head.
      try await insert(client, log, seq: 11, previous: head)
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 11)
    }
  }

  @Test func entriesAndCheckpointsAreAppendOnly() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(5)
    try await withDatabase { client, _ in
      _ = try await LogShipper(client: client).ship(directory: device.url)
      for statement in [
        "UPDATE chronicle.entries SET type_name = 'other' WHERE seq = 3",
        "DELETE FROM chronicle.entries WHERE seq = 5",
      ] {
        let error = await #expect(throws: PSQLError.self) {
          try await client.query(PostgresQuery(unsafeSQL: statement), logger: quietLogger)
        }
        #expect(error.flatMap(sqlState) == "CH003")
      }
      #expect(try await value(client, "SELECT count(*) FROM chronicle.entries WHERE type_name = 'deposit'", as: Int64.self) == 5)
    }
  }

  @Test func theServersTreeRootIsTheLogs() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(70)
    try await withDatabase { client, _ in
      _ = try await LogShipper(client: client).ship(directory: device.url)
      let log = try ActionLog(directory: device.url, access: .readOnly)
      defer { try? log.close() }
      let id = try #require(try log.logID())
      for size in [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 69, 70] as [UInt64] {
        let root = try await value(
          client, "SELECT chronicle.tree_root(\(bytea(id)), \(Int64(size)))", as: ByteBuffer.self)
        #expect(Array(root.readableBytesView) == (try log.treeRoot(size: size)), "size \(size)")
      }
    }
  }

  @Test func checkpointsAreShippedAndAForgedOneIsRefused() async throws {
    let device = try TestLog()
    defer { device.remove() }
    let signer = try NoteSigner(name: "ledger.test/device", seed: Array(repeating: 7, count: 32))
    try device.append(20)
    try device.withLog { _ = try $0.signCheckpoint(with: signer) }
    try device.append(13)
    try device.withLog { _ = try $0.signCheckpoint(with: signer) }
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client)
      let report = try await shipper.ship(directory: device.url)
      #expect(report.checkpointsShipped == 2)
      #expect(try await shipper.ship(directory: device.url).checkpointsShipped == 0)
      let log = try ActionLog(directory: device.url, access: .readOnly)
      defer { try? log.close() }
      let id = try #require(try log.logID())
      let notes = try await column(
        client, "SELECT note FROM chronicle.checkpoints WHERE log_id = \(bytea(id)) ORDER BY size", as: String.self)
      #expect(notes == (try log.checkpoints()).map { String(decoding: $0.formatted, as: UTF8.self) })

      // A checkpoint the entries do not produce, and one beyond the shipped entries.
      let origin = try log.origin()
      var forgedRoot = try log.treeRoot(size: 10)
      forgedRoot[5] ^= 0xff
      let beyond = try log.treeRoot(size: 33)
      for (size, root) in [(UInt64(10), forgedRoot), (UInt64(34), beyond)] {
        var note = SignedNote(text: Checkpoint(origin: origin, size: size, rootHash: root).text)
        try note.sign(with: signer)
        let error = await #expect(throws: PSQLError.self) {
          try await client.query(
            """
            INSERT INTO chronicle.checkpoints (log_id, size, root, note)
            VALUES (\(bytea(id)), \(Int64(size)), \(bytea(root)), \(String(decoding: note.formatted, as: UTF8.self)))
            """, logger: quietLogger)
        }
        #expect(error.flatMap(sqlState) == "CH004", "size \(size)")
      }
      #expect(try await value(client, "SELECT count(*) FROM chronicle.checkpoints", as: Int64.self) == 2)
    }
  }
}

// MARK: - Schema versions

@Suite(.needsPostgres) struct SchemaTests {
  @Test func migrationCreatesTheSchemaOnceAndRefusesANewerOne() async throws {
    try await withDatabase(migrated: false) { client, _ in
      let missing = await #expect(throws: ShipError.self) { try await PostgresSchema.check(client) }
      guard case .noSchema = missing else {
        Issue.record("expected noSchema, got \(String(describing: missing))")
        return
      }
      #expect(try await PostgresSchema.migrate(client) == 0)
      #expect(try await PostgresSchema.migrate(client) == PostgresSchema.currentVersion)
      #expect(try await PostgresSchema.check(client) == PostgresSchema.currentVersion)
      let versions = try await column(client, "SELECT version FROM chronicle.chronicle_schema", as: Int32.self)
      #expect(versions.sorted() == Array(1...Int32(PostgresSchema.currentVersion)))

      let next = PostgresSchema.currentVersion + 1
      try await client.query("INSERT INTO chronicle.chronicle_schema (version) VALUES (\(next))", logger: quietLogger)
      let newer = ShipError.newerSchema(found: next, supported: PostgresSchema.currentVersion)
      await #expect(throws: newer) { try await PostgresSchema.check(client) }
      await #expect(throws: newer) { try await PostgresSchema.migrate(client) }
    }
  }
}
