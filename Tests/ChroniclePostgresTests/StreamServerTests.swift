import ChronicleLog
import ChronicleTestTools
import Foundation
import PostgresNIO
import Testing

@testable import ChroniclePostgres

// MARK: - Records and roles

/// `count` entries of a new log written for `stream`, as the records device `device` pushes: their
/// stored bytes and hashes, from seq 1 (linked to the genesis hash). `tag` makes the entries differ
/// from another call's.
func streamRecords(_ stream: SharedStream, count: Int, device: String, tag: String = "") throws -> [StreamRecord] {
  let directory = try TemporaryDirectory(prefix: "chronicle-stream")
  defer { directory.remove() }
  let log = try ActionLog(
    directory: directory.child("log"), options: .init(durability: .normal, flushInterval: nil, appID: stream.name))
  defer { try? log.close() }
  _ = try log.append(
    contentsOf: try (1...count).map { i in
      try NewEntry(
        encoding: ["amount": i, "tag": tag.count], typeName: "expense",
        metadata: [SharedStreamLayout.deviceKey: device, "tag": tag], codec: i % 2 == 0 ? .cbor : .json)
    })
  return try (1...UInt64(count)).map { seq in
    let value = try #require(try log.storedValue(seq: seq))
    return StreamRecord(seq: seq, body: Array(value.dropLast(32)), hash: Array(value.suffix(32)), device: device)
  }
}

/// The genesis hash: what a stream's first entry links to.
let genesis = ChainAnchor.genesis.hash

/// A stream of its own for a test.
func uniqueStream(_ prefix: String = "expenses") -> SharedStream {
  SharedStream("\(prefix)-\(UUID().uuidString.prefix(8).lowercased())")
}

/// A new login role of the test cluster (roles are cluster-wide: the name is unique to the run),
/// and a client configuration of `database` that connects as it.
func makeRole(
  _ owner: PostgresClient, _ database: PostgresServer.Database, _ prefix: String
) async throws -> (name: String, configuration: PostgresClient.Configuration) {
  let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
  let password = "pw-\(name)"
  try await owner.query(
    PostgresQuery(unsafeSQL: "CREATE ROLE \(name) LOGIN PASSWORD '\(password)'"), logger: quietLogger)
  let configuration = PostgresClient.Configuration(
    host: "127.0.0.1", port: database.port, username: name, password: password, database: database.name,
    tls: .disable)
  return (name, configuration)
}

/// The stream's entries on the server: (seq, device, appended_by).
func storedDevices(_ client: PostgresClient, _ stream: SharedStream) async throws -> [(Int64, String, String)] {
  var rows: [(Int64, String, String)] = []
  let query: PostgresQuery =
    "SELECT seq, device, appended_by::text FROM chronicle.entries WHERE log_id = \(bytea(stream.id)) ORDER BY seq"
  for try await row in try await client.query(query, logger: quietLogger).decode((Int64, String, String).self) {
    rows.append(row)
  }
  return rows
}

/// The number of entries the server holds of `stream`.
func storedCount(_ client: PostgresClient, _ stream: SharedStream) async throws -> Int64 {
  try await value(client, "SELECT count(*) FROM chronicle.entries WHERE log_id = \(bytea(stream.id))")
}

// MARK: - Tests

@Suite(.needsPostgres) struct StreamServerTests {
  /// Appended records come back byte for byte, in order, page by page; the server stores every
  /// column the shipper stores (the derived-columns check finds nothing) and `server-verify` passes.
  @Test func appendedRecordsComeBackByteIdenticalPageByPage() async throws {
    try await withDatabase { client, database in
      let stream = uniqueStream()
      try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
      try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)  // idempotent
      try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
      let server = PostgresStreamServer(client: client, stream: stream)
      let records = try streamRecords(stream, count: 10, device: "a")

      #expect(try await server.records(after: 0, limit: 100) == [])
      #expect(try await server.append(Array(records[0..<6]), previousHash: genesis))
      #expect(try await server.append(Array(records[6...]), previousHash: records[5].hash))

      var read: [StreamRecord] = []
      var pages = 0
      while true {
        let page = try await server.records(after: read.last?.seq ?? 0, limit: 4)
        if page.isEmpty { break }
        #expect(page.count <= 4)
        read += page
        pages += 1
      }
      #expect(pages == 3)
      #expect(read == records)
      #expect(try await server.records(after: 10, limit: 4) == [])
      #expect(try await server.records(after: 3, limit: 2).map(\.seq) == [4, 5])

      let row = try await client.query(
        "SELECT head_seq, head_hash, shared, origin, app FROM chronicle.logs WHERE log_id = \(bytea(stream.id))",
        logger: quietLogger)
      for try await (head, hash, shared, origin, app) in row.decode((Int64, ByteBuffer, Bool, String, String).self) {
        #expect(head == 10 && Array(hash.readableBytesView) == records[9].hash)
        #expect(shared && origin == stream.origin && app == stream.name)
      }
      #expect(try await storedDevices(client, stream).map { "\($0.1) \($0.2)" } == Array(repeating: "a postgres", count: 10))
      let check = try await StoredColumnsCheck(client: client, logID: stream.id).check(after: 0)
      #expect(check.problems == [] && check.last == 10)
      let verified = try logtool(["server-verify", toolURL(database)])
      #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
      await server.close()
    }
  }

  /// A batch that does not continue the head is refused with nothing written (`false`), whether it
  /// repeats stored sequence numbers or leaves a gap; of two devices appending at the same sequence
  /// number at once, exactly one succeeds.
  @Test func anAppendThatDoesNotContinueTheHeadReturnsFalse() async throws {
    try await withDatabase { client, database in
      let stream = uniqueStream()
      try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
      try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
      try await PostgresStreamServer.registerDevice("b", role: "postgres", in: stream, on: client)
      let server = PostgresStreamServer(client: client, stream: stream)
      let records = try streamRecords(stream, count: 10, device: "a")
      #expect(try await server.append(Array(records[0..<5]), previousHash: genesis))

      // Entries the stream holds already (another device's, say): the primary key refuses them.
      #expect(try await server.append(Array(records[2..<4]), previousHash: records[1].hash) == false)
      // A gap after the head: the batch check refuses it.
      #expect(try await server.append(Array(records[6..<8]), previousHash: records[5].hash) == false)
      // Entries of another history at the stream's next sequence numbers that link elsewhere.
      let other = try streamRecords(stream, count: 7, device: "b", tag: "other")
      #expect(try await server.append(Array(other[0..<3]), previousHash: genesis) == false)
      #expect(try await storedCount(client, stream) == 5)
      #expect(try await server.records(after: 0, limit: 100) == Array(records[0..<5]))

      // A record that does not link to the head: a clear error, nothing written.
      let broken = await #expect(throws: PostgresStreamError.self) {
        try await server.append([other[5]], previousHash: records[4].hash)
      }
      if case .refused(let name, _, _, let reason) = broken {
        #expect(name == stream.name && reason.contains("CH002"), "\(reason)")
      } else {
        Issue.record("expected a refusal, got \(String(describing: broken))")
      }
      #expect(try await storedCount(client, stream) == 5)

      // Two devices race for the same sequence numbers, each on a client of its own.
      for round in 0..<3 {
        let raced = uniqueStream("race")
        try await PostgresStreamServer.createStream(raced, encrypted: false, on: client)
        try await PostgresStreamServer.registerDevice("a", role: "postgres", in: raced, on: client)
        try await PostgresStreamServer.registerDevice("b", role: "postgres", in: raced, on: client)
        let fromA = try streamRecords(raced, count: 3, device: "a", tag: "a\(round)")
        let fromB = try streamRecords(raced, count: 2, device: "b", tag: "b\(round)")
        let results = try await withClient(database.configuration) { second in
          let serverA = PostgresStreamServer(client: client, stream: raced)
          let serverB = PostgresStreamServer(client: second, stream: raced)
          async let a = serverA.append(fromA, previousHash: genesis)
          async let b = serverB.append(fromB, previousHash: genesis)
          return try await [a, b]
        }
        #expect(results.filter { $0 }.count == 1, "round \(round): \(results)")
        let stored = try await PostgresStreamServer(client: client, stream: raced).records(after: 0, limit: 10)
        #expect(stored == (results[0] ? fromA : fromB), "round \(round)")
      }
    }
  }

  /// Each device appends through a role of its own: the server records the device and the role,
  /// refuses a device the role is not registered for, and the role can change nothing: no update,
  /// no delete, no move of the head, no forged `appended_by`. It can store a checkpoint.
  @Test func aDeviceRoleAppendsAsItsDeviceOnly() async throws {
    try await withDatabase { owner, database in
      let stream = uniqueStream()
      try await PostgresStreamServer.createStream(stream, encrypted: false, on: owner)
      let roleA = try await makeRole(owner, database, "device_a")
      let roleB = try await makeRole(owner, database, "device_b")
      try await PostgresStreamServer.registerDevice("a", role: roleA.name, in: stream, on: owner)
      try await PostgresStreamServer.registerDevice("a", role: roleA.name, in: stream, on: owner)  // idempotent
      try await PostgresStreamServer.registerDevice("b", role: roleB.name, in: stream, on: owner)
      await #expect(throws: PostgresStreamError.deviceTaken(stream: stream.name, device: "a", role: roleA.name)) {
        try await PostgresStreamServer.registerDevice("a", role: roleB.name, in: stream, on: owner)
      }
      await #expect(throws: PostgresStreamError.unknownRole(role: "no_such_role_x", server: "the server")) {
        try await PostgresStreamServer.registerDevice("c", role: "no_such_role_x", in: stream, on: owner)
      }

      let fromA = try streamRecords(stream, count: 4, device: "a")
      try await withClient(roleA.configuration) { deviceA in
        let server = PostgresStreamServer(client: deviceA, stream: stream)
        #expect(try await server.append(Array(fromA[0..<2]), previousHash: genesis))
        // Device "b" through role A: refused, named, nothing written.
        let asB = fromA[2...].map { StreamRecord(seq: $0.seq, body: $0.body, hash: $0.hash, device: "b") }
        let refused = await #expect(throws: PostgresStreamError.self) {
          try await server.append(asB, previousHash: fromA[1].hash)
        }
        if case .deviceNotRegistered(let name, _, let entries, let reason) = refused {
          #expect(name == stream.name && entries == 3...4)
          #expect(reason.contains("'b'") && reason.contains(roleA.name), "\(reason)")
          #expect(refused?.description.contains("registerDevice") == true)
        } else {
          Issue.record("expected deviceNotRegistered, got \(String(describing: refused))")
        }
        #expect(try await storedCount(owner, stream) == 2)

        // What the role cannot do, whatever the client.
        let id = bytea(stream.id)
        let denied: [PostgresQuery] = [
          "UPDATE chronicle.entries SET device = 'b' WHERE log_id = \(id)",
          "DELETE FROM chronicle.entries WHERE log_id = \(id)",
          "UPDATE chronicle.logs SET head_seq = 0 WHERE log_id = \(id)",
          "DELETE FROM chronicle.stream_devices",
          "INSERT INTO chronicle.stream_devices (log_id, device, role) VALUES (\(id), 'c', current_user)",
          "TRUNCATE chronicle.entries",
        ]
        for statement in denied {
          let error = await #expect(throws: PSQLError.self, "\(statement.sql)") {
            try await deviceA.query(statement, logger: quietLogger)
          }
          #expect(error.flatMap(sqlState) == "42501", "\(statement.sql)")
        }
        // A forged appended_by: refused by the column privileges, before any check.
        let forged = await #expect(throws: PSQLError.self) {
          try await deviceA.query(
            """
            INSERT INTO chronicle.entries (log_id, seq, kind, flags, type_name, "timestamp", codec, schema_version,
              payload, body, hash, previous_hash, device, appended_by)
            VALUES (\(id), 3, 'action', 0, 'x', now(), 'json', 1, ''::bytea, \(bytea(asB[0].body)),
              \(bytea(asB[0].hash)), \(bytea(fromA[1].hash)), 'b', \(roleB.name))
            """, logger: quietLogger)
        }
        #expect(forged.flatMap(sqlState) == "42501")

        // A checkpoint of the stream (the server recomputes its root from the stored entries).
        try await deviceA.query(
          """
          INSERT INTO chronicle.checkpoints (log_id, size, root, note)
          SELECT log_id, 2, chronicle.tree_root(log_id, 2),
            origin || E'\\n2\\n' || encode(chronicle.tree_root(log_id, 2), 'base64') || E'\\n'
          FROM chronicle.logs WHERE log_id = \(id)
          """, logger: quietLogger)
      }
      #expect(try await value(owner, "SELECT count(*) FROM chronicle.checkpoints", as: Int64.self) == 1)

      // Device b continues the stream through its own role.
      let fromB = try streamRecords(stream, count: 1, device: "b", tag: "b")
      try await withClient(roleB.configuration) { deviceB in
        let server = PostgresStreamServer(client: deviceB, stream: stream)
        let head = try await server.records(after: 0, limit: 10)
        #expect(head == Array(fromA[0..<2]))
        // Its own entry re-linked after the stream's head: the body is the same bytes at seq 3.
        let rebased = try await rebase(fromB[0], onto: try #require(head.last), owner)
        #expect(try await server.append([rebased], previousHash: fromA[1].hash))
      }
      let stored = try await storedDevices(owner, stream)
      #expect(stored.map(\.0) == [1, 2, 3])
      #expect(stored.map(\.1) == ["a", "a", "b"])
      #expect(stored.map(\.2) == [roleA.name, roleA.name, roleB.name])
    }
  }

  /// A wait returns within well under a second of another client's append, and at its timeout when
  /// nothing is appended; a cancelled wait ends at once; `close` ends the waits and the listener.
  @Test func waitForRecordsWakesOnAnotherClientsAppend() async throws {
    try await withDatabase { client, database in
      let stream = uniqueStream()
      try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
      try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
      let records = try streamRecords(stream, count: 4, device: "a")
      try await withClient(database.configuration) { otherClient in
        let other = PostgresStreamServer(client: otherClient, stream: stream)
        #expect(try await other.append([records[0]], previousHash: genesis))

        let server = PostgresStreamServer(client: client, stream: stream)
        let clock = ContinuousClock()
        // The head is past 0 already: the first wait returns once it listens.
        let first = try await clock.measure { try await server.waitForRecords(after: 0, timeout: .seconds(10)) }
        #expect(first < .seconds(5))
        #expect(server.isListening)

        // Nothing happens: the wait ends at its timeout.
        let idle = try await clock.measure { try await server.waitForRecords(after: 1, timeout: .milliseconds(300)) }
        #expect(idle >= .milliseconds(300) && idle < .seconds(1), "\(idle)")

        // Another client appends: the wait wakes at once.
        for (index, record) in records[1...].enumerated() {
          let waiting = Task { () throws -> ContinuousClock.Instant in
            try await server.waitForRecords(after: record.seq - 1, timeout: .seconds(20))
            return clock.now
          }
          try await Task.sleep(for: .milliseconds(200))
          let appended = clock.now
          #expect(try await other.append([record], previousHash: records[index].hash))
          let woke = try await waiting.value
          #expect(woke > appended, "the wait returned before the append")
          #expect(woke - appended < .seconds(1), "woke \(woke - appended) after the append")
        }

        // A cancelled wait ends at once.
        let cancelled = Task { try await server.waitForRecords(after: 4, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        let cancelledAt = clock.now
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(clock.now - cancelledAt < .seconds(1))

        // close() ends a wait in progress, then refuses new ones; the listener is gone.
        let open = Task { try await server.waitForRecords(after: 4, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        let closing = clock.now
        await server.close()
        try await open.value
        #expect(clock.now - closing < .seconds(2))
        #expect(!server.isListening)
        await #expect(throws: PostgresStreamError.closed(stream: stream.name)) {
          try await server.waitForRecords(after: 4, timeout: .seconds(1))
        }
        #expect(try await server.records(after: 3, limit: 5) == [records[3]])
        await other.close()
      }
    }
  }

  /// The listening connection survives a server restart: while the server is down a wait returns
  /// at its timeout and a read fails with a clear error within its deadline; once the server is
  /// back the listener reconnects and a wait wakes on an append again.
  @Test(.timeLimit(.minutes(3))) func theListenerSurvivesAServerRestart() async throws {
    // A cluster of this test alone: stopping the shared one would break the other tests.
    let cluster = PostgresServer()
    let database = try await cluster.makeDatabase()
    let stream = uniqueStream()
    let records = try streamRecords(stream, count: 3, device: "a")
    let clock = ContinuousClock()
    do {
      try await withClient(database.configuration) { client in
        try await PostgresSchema.migrate(client)
        try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
        try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
        let options = PostgresStreamServer.Options(
          stepTimeout: .seconds(2), listenerCheckInterval: .seconds(1), maxRetryDelay: .milliseconds(500),
          serverName: "127.0.0.1:\(database.port)")
        let server = PostgresStreamServer(client: client, stream: stream, options: options)
        #expect(try await server.append([records[0]], previousHash: genesis))
        try await server.waitForRecords(after: 0, timeout: .seconds(10))
        #expect(server.isListening)

        try await cluster.crash()
        let down = try await clock.measure { try await server.waitForRecords(after: 1, timeout: .milliseconds(500)) }
        #expect(down < .seconds(2), "\(down)")
        let failedRead = clock.now
        let readError = await #expect(throws: (any Error).self) { _ = try await server.records(after: 0, limit: 10) }
        #expect(clock.now - failedRead < .seconds(4))
        let text = readError.map { "\($0)" } ?? ""
        #expect(text.contains(stream.name) && (text.contains("127.0.0.1") || text.contains("did not answer")), "\(text)")
        try await Task.sleep(for: .seconds(1))
        #expect(!server.isListening)

        try await cluster.restart()
        let restarted = clock.now
        while !server.isListening, clock.now - restarted < .seconds(60) {
          try await server.waitForRecords(after: 1, timeout: .milliseconds(200))
        }
        #expect(server.isListening, "the listener reconnected within a minute of the restart")
        let waiting = Task { () throws -> ContinuousClock.Instant in
          try await server.waitForRecords(after: 1, timeout: .seconds(20))
          return clock.now
        }
        try await Task.sleep(for: .milliseconds(200))
        var appended = clock.now
        var stored = false
        while !stored, clock.now - restarted < .seconds(90) {
          appended = clock.now
          do { stored = try await server.append([records[1]], previousHash: records[0].hash) } catch {
            try await Task.sleep(for: .milliseconds(200))
          }
        }
        #expect(stored)
        let woke = try await waiting.value
        #expect(woke - appended < .seconds(1), "woke \(woke - appended) after the append")
        await server.close()
      }
    } catch {
      await cluster.shutDown()
      throw error
    }
    await cluster.shutDown()
  }

  /// An encrypted stream stores what the device stores: the sealed bytes, the clear type name and
  /// the key identifier, never the metadata or the payload.
  @Test func anEncryptedStreamStoresCiphertextOnly() async throws {
    try await withDatabase { client, _ in
      let stream = uniqueStream("sealed")
      try await PostgresStreamServer.createStream(stream, encrypted: true, on: client)
      try await PostgresStreamServer.createStream(stream, encrypted: true, on: client)
      try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
      let key = EncryptionKey.random()
      let directory = try TemporaryDirectory(prefix: "chronicle-stream")
      defer { directory.remove() }
      let records: [StreamRecord] = try {
        let log = try ActionLog(
          directory: directory.child("log"),
          options: .init(durability: .normal, flushInterval: nil, appID: stream.name, keyRing: try KeyRing([key])))
        defer { try? log.close() }
        _ = try log.append(contentsOf: try (1...3).map(EncryptedTestLog.secret))
        return try (1...UInt64(3)).map { seq in
          let value = try #require(try log.storedValue(seq: seq))
          return StreamRecord(seq: seq, body: Array(value.dropLast(32)), hash: Array(value.suffix(32)), device: "a")
        }
      }()
      let server = PostgresStreamServer(client: client, stream: stream)
      #expect(try await server.append(records, previousHash: genesis))
      #expect(try await server.records(after: 0, limit: 10) == records)
      let sealed = try await value(
        client,
        """
        SELECT count(*) FROM chronicle.entries WHERE log_id = \(bytea(stream.id)) AND key_id = \(Int64(key.id))
          AND metadata IS NULL AND payload = ''::bytea AND payload_json IS NULL AND type_name = 'deposit'
          AND position('secret-marker'::bytea IN body) = 0
        """, as: Int64.self)
      #expect(sealed == 3)
      let check = try await StoredColumnsCheck(client: client, logID: stream.id).check(after: 0)
      #expect(check.problems == [])
      #expect(try await value(client, "SELECT format_version FROM chronicle.logs WHERE log_id = \(bytea(stream.id))", as: Int32.self) == 2)
    }
  }

  /// Creating and registering refuse what they cannot do, each with one sentence; appending to an
  /// unknown stream, or records that are not entries of the stream, fails before anything is written.
  @Test func clearErrorsForStreamsDevicesAndRecords() async throws {
    try await withDatabase { client, _ in
      let device = try TestLog()
      defer { device.remove() }
      try device.append(3)
      let shipped = try await LogShipper(client: client).ship(directory: device.url)
      #expect(shipped.entriesShipped == 3)

      // The identifier of a stream held by a log that is not shared.
      let taken = uniqueStream("taken")
      try await client.query(
        """
        INSERT INTO chronicle.logs (log_id, origin, app, created, anchor_seq, anchor_hash, head_seq, head_hash)
        VALUES (\(bytea(taken.id)), \(taken.origin), \(taken.name), now(), 0, \(bytea(genesis)), 0, \(bytea(genesis)))
        """, logger: quietLogger)
      await #expect(throws: PostgresStreamError.notAStream(stream: taken.name, server: "the server")) {
        try await PostgresStreamServer.createStream(taken, encrypted: false, on: client)
      }
      await #expect(throws: PostgresStreamError.notAStream(stream: taken.name, server: "the server")) {
        try await PostgresStreamServer(client: client, stream: taken).records(after: 0, limit: 1)
      }

      let stream = uniqueStream()
      let unknown = PostgresStreamServer(client: client, stream: stream, options: .init(serverName: "db.test:5432"))
      let notThere = await #expect(throws: PostgresStreamError.unknownStream(stream: stream.name, server: "db.test:5432")) {
        try await unknown.records(after: 0, limit: 10)
      }
      #expect(notThere?.description.contains("createStream") == true)
      await #expect(throws: PostgresStreamError.unknownStream(stream: stream.name, server: "the server")) {
        try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
      }
      await #expect(throws: PostgresStreamError.invalidArgument(reason: "a stream's name cannot be empty")) {
        try await PostgresStreamServer.createStream(SharedStream(""), encrypted: false, on: client)
      }

      try await PostgresStreamServer.createStream(stream, encrypted: true, on: client)
      await #expect(throws: PostgresStreamError.self) {
        try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
      }
      try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
      let server = PostgresStreamServer(client: client, stream: stream)
      let records = try streamRecords(stream, count: 2, device: "a")
      // Entries in the clear into an encrypted stream: refused before anything is sent.
      let clear = await #expect(throws: PostgresStreamError.self) { try await server.append(records, previousHash: genesis) }
      #expect(clear == .invalidRecord(stream: stream.name, seq: 1, reason: "it is stored in the clear and the stream is encrypted"))
      // Bytes that are not an entry, records that are not consecutive.
      let clearStream = uniqueStream()
      try await PostgresStreamServer.createStream(clearStream, encrypted: false, on: client)
      let clearServer = PostgresStreamServer(client: client, stream: clearStream)
      var garbage = records[0]
      garbage.body = [1, 2, 3]
      let notEntry = await #expect(throws: PostgresStreamError.self) { try await clearServer.append([garbage], previousHash: genesis) }
      guard case .invalidRecord(_, 1, let reason) = notEntry, reason.hasPrefix("its bytes are not an entry") else {
        Issue.record("\(String(describing: notEntry))")
        return
      }
      await #expect(throws: PostgresStreamError.self) {
        try await clearServer.append([records[0], records[0]], previousHash: genesis)
      }
      // A device the stream does not know, through the owner's role.
      let stranger = await #expect(throws: PostgresStreamError.self) { try await clearServer.append(records, previousHash: genesis) }
      guard case .deviceNotRegistered(_, _, 1...2, _) = stranger else {
        Issue.record("\(String(describing: stranger))")
        return
      }
      #expect(try await storedCount(client, clearStream) == 0)

      // A shipped log takes no device.
      let log = try ActionLog(directory: device.url, access: .readOnly)
      let logID = try #require(try log.logID())
      try log.close()
      let refused = await #expect(throws: PSQLError.self) {
        try await client.query(
          """
          INSERT INTO chronicle.entries (log_id, seq, kind, flags, type_name, "timestamp", codec, schema_version,
            payload, body, hash, previous_hash, device)
          SELECT log_id, seq + 3, kind, flags, type_name, "timestamp", codec, schema_version, payload, body, hash,
            previous_hash, 'a'
          FROM chronicle.entries WHERE log_id = \(bytea(logID)) AND seq = 1
          """, logger: quietLogger)
      }
      #expect(refused.flatMap(sqlState) == "CH006")
    }
  }

  /// A version 5 server holding shipped entries migrates to version 6: the entries stay as they
  /// were (no device, the migrating role in `appended_by`), shipping resumes from the stored head,
  /// and `server-verify` passes.
  @Test func aVersion5ServerWithShippedLogsMigratesToVersion6() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(40)
    try await withDatabase(migrated: false) { client, database in
      try await client.query("CREATE SCHEMA chronicle", logger: quietLogger)
      try await client.query(
        "CREATE TABLE chronicle.chronicle_schema (version integer PRIMARY KEY, migrated timestamptz NOT NULL DEFAULT now())",
        logger: quietLogger)
      for statement in PostgresSchema.migrations[0..<5].joined() {
        try await client.query(PostgresQuery(unsafeSQL: statement), logger: quietLogger)
      }
      try await client.query("INSERT INTO chronicle.chronicle_schema (version) VALUES (1), (2), (3), (4), (5)", logger: quietLogger)
      // Entries 1…25 stored as a version 5 shipper stores them.
      let log = try ActionLog(directory: device.url, access: .readOnly, options: LogShipper.readingOptions)
      defer { try? log.close() }
      let (id, anchor) = try await registerAsBeforeVersion3(client, log)
      let hex = try hexID(log)
      let batch = try Shipping.batch(log, 1...25, previous: anchor.hash, logID: id, hex: hex, keys: .init(logID: id))
      guard case .stored = try await Shipping.insert(client, batch, hex: hex) else {
        Issue.record("version 5 refused the batch")
        return
      }
      let stream = uniqueStream()
      await #expect(throws: PostgresStreamError.olderSchema(server: "the server")) {
        try await PostgresStreamServer(client: client, stream: stream).records(after: 0, limit: 1)
      }

      #expect(try await PostgresSchema.migrate(client) == 5)
      #expect(try await PostgresSchema.check(client) == 6)
      let report = try await LogShipper(client: client, options: .init(batchSize: 10)).ship(log)
      #expect(report.entriesShipped == 15 && report.serverHead == 40)
      #expect(try await serverHashes(client) == (try log.records(in: 1...40).map(\.hash)))
      let devices = try await column(
        client, "SELECT count(*) FROM chronicle.entries WHERE device IS NULL AND appended_by = 'postgres'", as: Int64.self)
      #expect(devices == [40])
      #expect(try await value(client, "SELECT shared FROM chronicle.logs", as: Bool.self) == false)
      let verified = try logtool(["server-verify", toolURL(database)])
      #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")

      // Streams work on the migrated server beside the shipped log.
      try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
      try await PostgresStreamServer.registerDevice("a", role: "postgres", in: stream, on: client)
      let records = try streamRecords(stream, count: 3, device: "a")
      #expect(try await PostgresStreamServer(client: client, stream: stream).append(records, previousHash: genesis))
    }
  }
}

/// `record` as its device pushes it after the stream's `head`: the same bytes at the next sequence
/// number, linked to the head (its hash recomputed by the server's `sha256`).
func rebase(_ record: StreamRecord, onto head: StreamRecord, _ client: PostgresClient) async throws -> StreamRecord {
  let seq = head.seq + 1
  let hash = try await value(
    client, "SELECT sha256(\(bytea(head.hash)) || int8send(\(Int64(seq))) || \(bytea(record.body)))", as: ByteBuffer.self)
  return StreamRecord(seq: seq, body: record.body, hash: Array(hash.readableBytesView), device: record.device)
}
