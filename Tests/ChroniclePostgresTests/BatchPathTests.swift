import ChronicleLog
import Foundation
import PostgresNIO
import Testing

@testable import ChroniclePostgres

// MARK: - Batches as the server takes them

/// The batch statement (one array per column), the metadata JSON the shipper writes itself, the
/// batch read ahead while the server stores the one before, and schema version 2.
@Suite(.needsPostgres) struct BatchPathTests {
  /// Metadata values JSON must escape, one entry each.
  static let awkward: [[String: String]] = [
    ["user": "ann \"the admin\"", "path": "C:\\till\\3"],
    ["why": "line one\nline two\ttabbed\r", "bell": "\u{7}\u{1f}"],
    ["qui": "Zoë – 東京 🧾", "": "empty key", "slash": "a/b"],
    ["key \"quoted\"": "", "back\\slash": "}{][,:"],
  ]

  @Test func metadataJSONIsTheDictionaryWhateverItHolds() throws {
    for metadata in Self.awkward + [[:], ["user": "bob"]] {
      let json = try #require(Shipping.metadataJSON(metadata))
      let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
      #expect(parsed == metadata, "\(json)")
    }
    // jsonb cannot hold a NUL character: such metadata is stored as NULL.
    #expect(Shipping.metadataJSON(["note": "a\u{0}b"]) == nil)
    #expect(Shipping.metadataJSON(["a\u{0}": "b"]) == nil)
  }

  /// The columns the shipper writes in the binary array format itself are, on the server, the
  /// arrays they hold: every element type the batch uses, empty or not.
  @Test func arrayColumnsAreOnTheServerTheArraysTheyHold() async throws {
    var texts = ArrayColumn<String>(capacity: 3, bytesEach: 8)
    for text in ["deposit", "", "Zoë – 東京 🧾"] { texts.append(text) }
    var bytes = ArrayColumn<ByteBuffer>(capacity: 2, bytesEach: 4)
    bytes.append(bytes: [0x00, 0xff, 0x10])
    bytes.append(bytes: EmptyCollection())
    var longs = ArrayColumn<Int64>(capacity: 2, bytesEach: 8)
    longs.append(Int64.min)
    longs.append(42)
    var shorts = ArrayColumn<Int16>(capacity: 1, bytesEach: 2)
    shorts.append(-3)
    try await withDatabase(migrated: false) { client, _ in
      var binds = PostgresBindings()
      binds.append(texts)
      binds.append(bytes)
      binds.append(longs)
      binds.append(shorts)
      binds.append(ArrayColumn<String>(capacity: 0, bytesEach: 0))
      let query = PostgresQuery(
        unsafeSQL: """
          SELECT $1::text[] = ARRAY['deposit', '', 'Zoë – 東京 🧾']
            AND $2::bytea[] = ARRAY['\\x00ff10'::bytea, ''::bytea]
            AND $3::bigint[] = ARRAY[-9223372036854775808, 42]::bigint[]
            AND $4::smallint[] = ARRAY[-3]::smallint[]
            AND cardinality($5::text[]) = 0
          """, binds: binds)
      let same = try await value(client, query, as: Bool.self)
      #expect(same)
    }
    #expect(longs.last == 42)
    #expect(texts.count == 3)
  }

  @Test func awkwardMetadataIsStoredAsJSONThatQueriesFind() async throws {
    let device = try TestLog()
    defer { device.remove() }
    let all = Self.awkward + [["note": "a\u{0}b"]]
    try device.append(all.count) { i in
      // The last entry's payload holds a NUL character too: its JSON cannot be jsonb.
      try i == all.count
        ? NewEntry(encoding: ["note": "a\u{0}b"], typeName: "note", metadata: all[i - 1], codec: .cbor)
        : NewEntry(encoding: ["amount": i], typeName: "deposit", metadata: all[i - 1], codec: .json)
    }
    try await withDatabase { client, _ in
      #expect(try await LogShipper(client: client).ship(directory: device.url).entriesShipped == all.count)
      for (index, metadata) in Self.awkward.enumerated() {
        let rows = try await client.query(
          "SELECT key, value FROM chronicle.entries, jsonb_each_text(metadata) WHERE seq = \(Int64(index + 1))",
          logger: quietLogger)
        var stored: [String: String] = [:]
        for try await (key, value) in rows.decode((String, String).self) { stored[key] = value }
        #expect(stored == metadata, "entry \(index + 1)")
      }
      let nul = try await value(
        client,
        "SELECT metadata IS NULL AND payload_json IS NULL FROM chronicle.entries WHERE seq = \(Int64(all.count))",
        as: Bool.self)
      #expect(nul)
      #expect(Shipping.jsonbSafe(#"{"a":"\u0000"}"#) == nil)
      #expect(Shipping.jsonbSafe(#"{"a":"\\u0000 and \u00e9"}"#) == nil)
      #expect(Shipping.jsonbSafe(#"{"a":"u0000 \u00e9"}"#) == #"{"a":"u0000 \u00e9"}"#)
      // The containment query of docs/postgres.md finds the entry.
      let found = try await column(
        client, #"SELECT seq FROM chronicle.entries WHERE metadata @> '{"user": "ann \"the admin\""}'"#,
        as: Int64.self)
      #expect(found == [1])
    }
  }

  @Test func anEntryThatDoesNotLinkInsideABatchStoresNothingOfTheBatch() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(10)
    let earlier = try device.copy(named: "earlier")
    try device.append(20)
    // Entry 24's bytes change on the device (its metadata says "entry 24"), its hash stays: the
    // server's check, not the shipper, must refuse it, in the middle of the second batch.
    let data = device.url.appendingPathComponent("data.mdb")
    var bytes = try Data(contentsOf: data)
    let marker = Data("entry 24".utf8)
    let at = try #require(bytes.range(of: marker))
    #expect(bytes.range(of: marker, in: at.upperBound..<bytes.endIndex) == nil)
    bytes[at.lowerBound] = UInt8(ascii: "E")
    try bytes.write(to: data)
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client, options: .init(batchSize: 12))
      #expect(try await shipper.ship(directory: earlier).serverHead == 10)
      let id = try device.withLog { try hexID($0) }
      let error = await #expect(throws: ShipError.self) { try await shipper.ship(directory: device.url) }
      guard case .brokenLink(let logID, let reason) = error else {
        Issue.record("expected brokenLink, got \(String(describing: error))")
        return
      }
      #expect(logID == id)
      #expect(reason.contains("entry 24 of log \(id)"), "\(reason)")
      // The first batch (11…22) committed; nothing of the second (23…30) is stored.
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 22)
      let seqs = try await column(client, "SELECT seq FROM chronicle.entries ORDER BY seq", as: Int64.self)
      #expect(seqs == Array(1...22))
    }
  }

  @Test func twoShippersOfOneLogStoreEachEntryOnce() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(1_200)
    let other = try device.copy(named: "other")
    try await withDatabase { client, _ in
      // Each reads its next batch while the server stores the current one; the other shipper's
      // batches move the server's head under it, so what it read ahead must be read again.
      let options = LogShipper.Options(batchSize: 40)
      async let first = LogShipper(client: client, options: options).ship(directory: device.url)
      async let second = LogShipper(client: client, options: options).ship(directory: other)
      let reports = try await [first, second]
      #expect(reports.map(\.entriesShipped).reduce(0, +) == 1_200)
      #expect(reports.allSatisfy { $0.serverHead == 1_200 })
      let seqs = try await column(client, "SELECT seq FROM chronicle.entries ORDER BY seq", as: Int64.self)
      #expect(seqs == Array(1...1_200))
      let deviceHashes = try device.withLog { log in try log.records(in: 1...1_200).map(\.hash) }
      #expect(try await serverHashes(client) == deviceHashes)
    }
  }

  /// After its first batch a shipper sends the next ones without reading the server's head. When
  /// another shipper moved the head meanwhile, the server refuses such a batch (its entries are
  /// there already; nothing of it is stored), and the shipper goes back to reading the head,
  /// comparing the device with it and shipping from there.
  @Test func aBatchAfterAnotherShipperMovedTheHeadIsSentAgainFromTheNewHead() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(80)
    let other = try device.copy(named: "other")
    try device.append(120)
    try await withDatabase { client, database in
      let url = toolURL(database)
      // Once the first batch (1…40) is stored, `logtool ship` of the copy stores 41…80.
      let report = try await LogShipper(client: client, options: .init(batchSize: 40)).ship(directory: device.url) {
        report in
        guard report.batches == 1 else { return }
        let shipped = try? logtool(["ship", other.path, "--to", url])
        #expect(shipped?.status == 0, "\(shipped?.stderr ?? "logtool did not run")")
      }
      #expect(report.entriesShipped == 160)
      #expect(report.batches == 4)
      #expect(report.serverHead == 200)
      let seqs = try await column(client, "SELECT seq FROM chronicle.entries ORDER BY seq", as: Int64.self)
      #expect(seqs == Array(1...200))
      let deviceHashes = try device.withLog { log in try log.records(in: 1...200).map(\.hash) }
      #expect(try await serverHashes(client) == deviceHashes)
    }
  }

  /// The batch check's plan does not depend on the batch a session began with. PostgreSQL keeps
  /// the row count of a session's first batch in the plans it caches for the trigger's queries:
  /// the check of schema version 3 and before joined the batch with itself, and after a first
  /// batch of one entry (a `follow` pass that found one new entry) that join ran as a nested loop,
  /// quadratic in the batch: seconds for a batch of 4,000. `auto_explain` logs the plans of the
  /// check's statements in this database's sessions; none may be a nested loop.
  @Test func theBatchCheckHasNoNestedLoopAfterAOneEntryBatch() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(1)
    let serverLog = try await PostgresServer.shared.start().directory + "/server.log"
    try await withDatabase { client, database in
      try await client.withConnection { connection in
        // Known to this session, so that the database can be set to load it in new ones.
        try await connection.query("LOAD 'auto_explain'", logger: quietLogger)
        for setting in [
          "session_preload_libraries = 'auto_explain'", "auto_explain.log_min_duration = 0",
          "auto_explain.log_nested_statements = on",
        ] {
          try await connection.query(
            PostgresQuery(unsafeSQL: "ALTER DATABASE \(database.name) SET \(setting)"), logger: quietLogger)
        }
      }
      let logged = try FileManager.default.attributesOfItem(atPath: serverLog)[.size] as? Int ?? 0
      // A client of its own, whose sessions start with the settings; one session ships both calls.
      try await withClient(database.configuration) { client in
        let shipper = LogShipper(client: client, options: LogShipper.Options(batchSize: 4_000))
        #expect(try await shipper.ship(directory: device.url).entriesShipped == 1)
        try device.append(4_000)
        #expect(try await shipper.ship(directory: device.url).entriesShipped == 4_000)
      }
      let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: serverLog))
      defer { try? handle.close() }
      try handle.seek(toOffset: UInt64(logged))
      let text = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
      // Each logged plan starts with "duration:"; the check's are those of its statement on new_entries.
      let plans = text.components(separatedBy: "duration:").filter { $0.contains("FROM new_entries") }
      #expect(plans.count >= 2, "the check's plans were not logged")
      for plan in plans { #expect(!plan.contains("Nested Loop"), "\(plan)") }
    }
  }

  // MARK: Schema version 2

  /// Stores `log`'s entries 1…`last` as a version 1 server took them: registered, then one
  /// statement per entry.
  func storeAsVersion1(_ client: PostgresClient, _ log: ActionLog, upTo last: UInt64) async throws {
    let (id, anchor) = try await registerAsBeforeVersion3(client, log)
    var previous = anchor.hash
    for seq in 1...last {
      let value = try #require(try log.storedValue(seq: seq))
      let entry = try #require(try log.record(at: seq))
      try await client.query(
        """
        INSERT INTO chronicle.entries (log_id, seq, kind, flags, type_name, "timestamp", codec, schema_version,
          payload, body, hash, previous_hash)
        VALUES (\(bytea(id)), \(Int64(seq)), 'action', 0, \(entry.typeName), now(), 'json', 1,
          \(bytea(entry.payload)), \(bytea(Array(value.dropLast(32)))), \(bytea(entry.hash)), \(bytea(previous)))
        """, logger: quietLogger)
      previous = entry.hash
    }
  }

  @Test func aVersion1ServerIsMigratedKeepsItsEntriesAndTakesTheRest() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(40)
    try await withDatabase(migrated: false) { client, _ in
      // A server as version 1 of the library left it.
      try await client.query("CREATE SCHEMA chronicle", logger: quietLogger)
      try await client.query(
        "CREATE TABLE chronicle.chronicle_schema (version integer PRIMARY KEY, migrated timestamptz NOT NULL DEFAULT now())",
        logger: quietLogger)
      for statement in PostgresSchema.migrations[0] {
        try await client.query(PostgresQuery(unsafeSQL: statement), logger: quietLogger)
      }
      try await client.query("INSERT INTO chronicle.chronicle_schema (version) VALUES (1)", logger: quietLogger)
      let log = try ActionLog(directory: device.url, access: .readOnly)
      defer { try? log.close() }
      try await storeAsVersion1(client, log, upTo: 25)

      // The shipper does not ship to an older schema; the library migrates it.
      await #expect(throws: ShipError.olderSchema(found: 1, supported: PostgresSchema.currentVersion)) {
        try await LogShipper(client: client).ship(log)
      }
      #expect(try await PostgresSchema.migrate(client) == 1)
      #expect(try await column(client, "SELECT version FROM chronicle.chronicle_schema ORDER BY version", as: Int32.self) == Array(1...Int32(PostgresSchema.currentVersion)))
      let foreignKeys = try await value(
        client, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'chronicle.entries'::regclass AND contype = 'f'",
        as: Int64.self)
      #expect(foreignKeys == 0)

      let report = try await LogShipper(client: client, options: .init(batchSize: 6)).ship(log)
      #expect(report.entriesShipped == 15)
      #expect(report.serverHead == 40)
      #expect(try await serverHashes(client) == (try log.records(in: 1...40).map(\.hash)))

      // What the foreign key guarded, the checks of version 2 guard.
      let id = try #require(try log.logID())
      var stranger = id
      stranger[0] ^= 0xff
      let refusals: [(String, String)] = [
        ("DELETE FROM chronicle.logs", "CH003"),
        ("TRUNCATE chronicle.logs CASCADE", "CH003"),
        ("TRUNCATE chronicle.entries", "CH003"),
        ("TRUNCATE chronicle.checkpoints", "CH003"),
      ]
      for (statement, state) in refusals {
        let error = await #expect(throws: PSQLError.self, "\(statement)") {
          try await client.query(PostgresQuery(unsafeSQL: statement), logger: quietLogger)
        }
        #expect(error.flatMap(sqlState) == state, "\(statement)")
      }
      let unregistered = await #expect(throws: PSQLError.self) {
        try await client.query(
          """
          INSERT INTO chronicle.entries (log_id, seq, kind, flags, type_name, "timestamp", codec, schema_version,
            payload, body, hash, previous_hash)
          SELECT \(bytea(stranger)), seq, kind, flags, type_name, "timestamp", codec, schema_version, payload, body,
            hash, previous_hash FROM chronicle.entries WHERE seq = 1
          """, logger: quietLogger)
      }
      #expect(unregistered.flatMap(sqlState) == "CH001")
      #expect(try await value(client, "SELECT count(*) FROM chronicle.entries", as: Int64.self) == 40)
      #expect(try await value(client, "SELECT count(*) FROM chronicle.logs", as: Int64.self) == 1)
    }
  }
}
