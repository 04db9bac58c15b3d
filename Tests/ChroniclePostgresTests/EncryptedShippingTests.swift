import ChronicleLog
@testable import ChroniclePostgres
import Foundation
import PostgresNIO
import Testing
import ChronicleTestTools

// MARK: - An encrypted device log

/// An encrypted log in a temporary directory: entries sealed with the first key, then, after a
/// rotation, with the second; every payload and metadata value holds `secret-marker`.
struct EncryptedTestLog {
  let device: TestLog
  let first = EncryptionKey.random()
  let second = EncryptionKey.random()
  /// Whether the log seals its type names too.
  let sealsTypeNames: Bool
  var url: URL { device.url }

  init(sealsTypeNames: Bool = false) throws {
    device = try TestLog()
    self.sealsTypeNames = sealsTypeNames
  }

  /// The ring before the rotation (`rotated == false`) or after it.
  func ring(rotated: Bool) throws -> KeyRing {
    try KeyRing(rotated ? [first, second] : [first], sealsTypeNames: sealsTypeNames)
  }

  /// Opens the log for writing with the ring (creating it encrypted) for `body`.
  func withLog<R>(at url: URL? = nil, rotated: Bool, _ body: (ActionLog) throws -> R) throws -> R {
    let log = try ActionLog(
      directory: url ?? self.url,
      options: ActionLog.Options(durability: .normal, flushInterval: nil, appID: "ledger", keyRing: try ring(rotated: rotated)))
    defer { try? log.close() }
    return try body(log)
  }

  /// Appends `count` entries made by `entry`, sealed with the ring's newest key.
  func append(
    _ count: Int, at url: URL? = nil, rotated: Bool, _ entry: (Int) throws -> NewEntry = EncryptedTestLog.secret
  ) throws {
    try withLog(at: url, rotated: rotated) { log in
      let first = Int(try log.lastSeq) + 1
      _ = try log.append(contentsOf: try (first..<first + count).map(entry))
    }
  }

  /// Entry `i`: a deposit whose payload and metadata hold the marker.
  static func secret(_ i: Int) throws -> NewEntry {
    try NewEntry(
      encoding: ["note": "secret-marker \(i)", "amount": "\(i)"], typeName: "deposit",
      metadata: ["user": "secret-marker-user", "why": "secret-marker \(i)"], codec: .json)
  }

  /// Entry `i` of another history (a fork when appended instead of ``secret(_:)``).
  static func other(_ i: Int) throws -> NewEntry {
    try NewEntry(encoding: ["note": "secret-marker other \(i)"], typeName: "withdrawal", codec: .cbor)
  }

  /// The device's stored hashes of entries `range`.
  func storedHashes(_ range: ClosedRange<UInt64>) throws -> [[UInt8]] {
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    return try range.map { Array(try #require(try log.storedValue(seq: $0)).suffix(32)) }
  }

  func remove() { device.remove() }
}

/// How many entries hold `marker` in any column: the text of the row (jsonb, text, and bytea as
/// hex) or the raw bytes of a bytea column.
func entriesHolding(_ marker: String, _ client: PostgresClient) async throws -> Int64 {
  try await value(
    client,
    """
    SELECT count(*) FROM chronicle.entries e
    WHERE e::text LIKE '%' || \(marker) || '%'
      OR e::text LIKE '%' || encode(convert_to(\(marker), 'UTF8'), 'hex') || '%'
      OR position(convert_to(\(marker), 'UTF8') IN e.body) > 0
      OR position(convert_to(\(marker), 'UTF8') IN e.payload) > 0
    """, as: Int64.self)
}

// MARK: - Tests

/// Encrypted logs through PostgreSQL: the server holds and verifies the ciphertext, never the key.
@Suite(.needsPostgres) struct EncryptedShippingTests {
  /// Shipped without the key (and through a handle holding the key ring): the server holds the
  /// stored bytes and clear headers, no plaintext in any column, both key identifiers, the
  /// device's hashes; it accepts the log's signed checkpoints and refuses a forged one.
  @Test func anEncryptedLogShipsAsCiphertextAndTheServerChecksItWithoutTheKey() async throws {
    let device = try EncryptedTestLog()
    defer { device.remove() }
    let signer = try NoteSigner(name: "ledger.test/device", seed: Array(repeating: 11, count: 32))
    try device.append(30, rotated: false)
    try device.withLog(rotated: false) { _ = try $0.signCheckpoint(with: signer) }
    try device.append(20, rotated: true)
    try device.withLog(rotated: true) { _ = try $0.signCheckpoint(with: signer) }
    try await withDatabase { client, _ in
      // A handle that holds the key ring ships the first entries, the shipper's own handle (no key) the rest.
      let keyed = try ActionLog(
        directory: device.url, access: .readOnly, options: .init(keyRing: try device.ring(rotated: true)))
      let first = try await LogShipper(client: client, options: .init(batchSize: 7)).ship(keyed)
      let origin = try keyed.origin()
      let id = try #require(try keyed.logID())
      try keyed.close()
      #expect(first.entriesShipped == 50 && first.checkpointsShipped == 2)
      #expect(try await LogShipper(client: client).ship(directory: device.url).entriesShipped == 0)

      #expect(try await entriesHolding("secret-marker", client) == 0)
      #expect(try await value(client, "SELECT format_version FROM chronicle.logs", as: Int32.self) == 2)
      let keys = try await column(
        client, "SELECT key_id FROM chronicle.entries GROUP BY key_id ORDER BY min(seq)", as: Int64.self)
      #expect(keys == [Int64(device.first.id), Int64(device.second.id)])
      let perKey = try await column(
        client, "SELECT count(*) FROM chronicle.entries GROUP BY key_id ORDER BY min(seq)", as: Int64.self)
      #expect(perKey == [30, 20])
      let contentless = try await value(
        client,
        """
        SELECT count(*) FROM chronicle.entries WHERE octet_length(payload) = 0 AND metadata IS NULL
          AND payload_json IS NULL AND type_name = 'deposit' AND kind = 'action' AND codec = 'json'
        """, as: Int64.self)
      #expect(contentless == 50, "clear header fields only")
      #expect(try await serverHashes(client) == (try device.storedHashes(1...50)))

      // The server recomputes the tree over the ciphertext: the device's roots, a forged one refused.
      let log = try ActionLog(directory: device.url, access: .readOnly)
      defer { try? log.close() }
      for size in [UInt64(1), 30, 50] {
        let root = try await value(
          client, "SELECT chronicle.tree_root(\(bytea(id)), \(Int64(size)))", as: ByteBuffer.self)
        #expect(Array(root.readableBytesView) == (try log.treeRoot(size: size)), "size \(size)")
      }
      var forged = try log.treeRoot(size: 40)
      forged[0] ^= 1
      var note = SignedNote(text: Checkpoint(origin: origin, size: 40, rootHash: forged).text)
      try note.sign(with: signer)
      let refused = await #expect(throws: PSQLError.self) {
        try await client.query(
          """
          INSERT INTO chronicle.checkpoints (log_id, size, root, note)
          VALUES (\(bytea(id)), 40, \(bytea(forged)), \(String(decoding: note.formatted, as: UTF8.self)))
          """, logger: quietLogger)
      }
      #expect(refused.flatMap(sqlState) == "CH004")
      #expect(try await value(client, "SELECT count(*) FROM chronicle.checkpoints", as: Int64.self) == 2)
    }
  }

  /// `pull` rebuilds the encrypted log (type names sealed too) byte for byte without a key (export
  /// format 3), `verify` passes without the key, the app's key ring reads the actions;
  /// `server-verify` passes, then names the log and entry whose ciphertext was changed on the server.
  @Test func pullRebuildsTheEncryptedLogAndServerVerifyFindsATamperedCiphertext() async throws {
    let device = try EncryptedTestLog(sealsTypeNames: true)
    defer { device.remove() }
    let signer = try NoteSigner(name: "ledger.test/device", seed: Array(repeating: 12, count: 32))
    try device.append(12, rotated: false)
    try device.append(13, rotated: true)
    try device.withLog(rotated: true) { _ = try $0.signCheckpoint(with: signer) }
    let (id, idHex) = try device.withLog(rotated: true) { (try #require(try $0.logID()), try hexID($0)) }
    try await withDatabase { client, database in
      _ = try await LogShipper(client: client).ship(directory: device.url)
      let url = toolURL(database)
      #expect(try await value(client, "SELECT count(*) FROM chronicle.entries WHERE type_name = ''", as: Int64.self) == 25)
      #expect(try await entriesHolding("deposit", client) == 0, "the sealed type name")

      let copy = device.device.directory.child("pulled")
      let pulled = try pullByteIdentical(url, idHex, of: device.url, into: copy)
      #expect(pulled.contains("25 entries, head 25, 1 checkpoints"), "\(pulled)")
      let ring = try device.ring(rotated: true)
      let read: ([StoredEntry], [StoredEntry]) = try {
        let opened = try ActionLog(directory: copy, access: .readOnly, options: .init(keyRing: ring))
        defer { try? opened.close() }
        let source = try ActionLog(directory: device.url, access: .readOnly, options: .init(keyRing: ring))
        defer { try? source.close() }
        return (try opened.records(in: 1...25), try source.records(in: 1...25))
      }()
      #expect(read.0 == read.1)
      #expect(
        read.0.allSatisfy {
          $0.sealedKeyID == nil && $0.typeName == "deposit" && $0.metadata["user"] == "secret-marker-user"
        })

      let clean = try logtool(["server-verify", url, idHex])
      #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
      #expect(clean.stdout.contains("25 entries up to 25, 1 checkpoints: ok"), "\(clean.stdout)")

      // A superuser changes one byte of entry 7's ciphertext behind the append-only trigger.
      try await client.query("ALTER TABLE chronicle.entries DISABLE TRIGGER entries_append_only", logger: quietLogger)
      try await client.query(
        """
        UPDATE chronicle.entries SET body = set_byte(body, octet_length(body) - 20, get_byte(body, octet_length(body) - 20) # 1)
        WHERE log_id = \(bytea(id)) AND seq = 7
        """, logger: quietLogger)
      // And names entry 20 (sealed with the second key) as sealed with the first.
      try await client.query(
        "UPDATE chronicle.entries SET key_id = \(Int64(device.first.id)) WHERE log_id = \(bytea(id)) AND seq = 20",
        logger: quietLogger)
      let tampered = try logtool(["server-verify", url, idHex])
      #expect(tampered.status == 1, "\(tampered.stdout) \(tampered.stderr)")
      #expect(
        tampered.stdout.contains("log \(idHex): entry 7: its hash is not the hash of its bytes"), "\(tampered.stdout)")
      #expect(tampered.stdout.contains("checkpoint of size 25 has a root the stored entries do not produce"))
      #expect(
        tampered.stdout.contains("log \(idHex): entry 20: key_id is not what its stored bytes hold"),
        "\(tampered.stdout)")
    }
  }

  /// A device log that diverges from what the server holds of an encrypted log is a fork, found
  /// without the key, and nothing of it is stored.
  @Test func aForkOfAnEncryptedLogIsDetectedAndNothingOfItStored() async throws {
    let device = try EncryptedTestLog()
    defer { device.remove() }
    try device.append(10, rotated: false)
    let twin = try device.device.copy(named: "twin")
    try device.append(5, rotated: true)
    try device.append(8, at: twin, rotated: true, EncryptedTestLog.other)
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client, options: .init(batchSize: 4))
      #expect(try await shipper.ship(directory: device.url).serverHead == 15)
      let id = try device.withLog(rotated: true) { try hexID($0) }
      await #expect(throws: ShipError.fork(logID: id, seq: 11)) { try await shipper.ship(directory: twin) }
      #expect(try await serverHashes(client) == (try device.storedHashes(1...15)))
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 15)
    }
  }

  /// A server of schema version 2 holding a log in the clear and an encrypted log that an older
  /// shipper stored through a handle holding the key ring (decrypted metadata and payload in their
  /// columns) is migrated: the plaintext goes, the key identifiers and formats are filled in; then
  /// both logs ship on and pull byte-identical.
  @Test func aVersion2ServerIsMigratedAndBothLogsShipOnAndPull() async throws {
    let device = try EncryptedTestLog()
    defer { device.remove() }
    let clear = try TestLog()
    defer { clear.remove() }
    try device.append(6, rotated: false)
    try device.append(6, rotated: true)
    try clear.append(9)
    try await withDatabase(migrated: false) { client, database in
      try await client.query("CREATE SCHEMA chronicle", logger: quietLogger)
      try await client.query(
        "CREATE TABLE chronicle.chronicle_schema (version integer PRIMARY KEY, migrated timestamptz NOT NULL DEFAULT now())",
        logger: quietLogger)
      for statement in PostgresSchema.migrations[0] + PostgresSchema.migrations[1] {
        try await client.query(PostgresQuery(unsafeSQL: statement), logger: quietLogger)
      }
      try await client.query("INSERT INTO chronicle.chronicle_schema (version) VALUES (1), (2)", logger: quietLogger)
      let ring = try device.ring(rotated: true)
      try await storeAsVersion2(client, device.url, ring: ring, upTo: 8)
      try await storeAsVersion2(client, clear.url, ring: nil, upTo: 5)
      #expect(try await entriesHolding("secret-marker", client) == 8, "what an older shipper stored")

      await #expect(throws: ShipError.olderSchema(found: 2, supported: PostgresSchema.currentVersion)) {
        try await LogShipper(client: client).ship(directory: device.url)
      }
      #expect(try await PostgresSchema.migrate(client) == 2)
      #expect(try await entriesHolding("secret-marker", client) == 0)
      let keys = try await column(
        client, "SELECT coalesce(key_id, -1) FROM chronicle.entries ORDER BY key_id IS NULL, seq", as: Int64.self)
      #expect(keys == Array(repeating: Int64(device.first.id), count: 6) + [Int64(device.second.id), Int64(device.second.id)] + Array(repeating: -1, count: 5))
      let formats = try await column(
        client, "SELECT format_version FROM chronicle.logs ORDER BY format_version", as: Int32.self)
      #expect(formats == [1, 2])

      let shipper = LogShipper(client: client)
      #expect(try await shipper.ship(directory: device.url).entriesShipped == 4)
      #expect(try await shipper.ship(directory: clear.url).entriesShipped == 4)
      for (directory, name) in [(device.url, "encrypted"), (clear.url, "clear")] {
        let idHex = try {
          let log = try ActionLog(directory: directory, access: .readOnly)
          defer { try? log.close() }
          return try hexID(log)
        }()
        let copy = device.device.directory.child("pulled-\(name)")
        let pulled = try logtool(["pull", toolURL(database), idHex, copy.path])
        #expect(pulled.status == 0, "\(name): \(pulled.stderr)")
        #expect(try RawDump(copy).entries == RawDump(directory).entries, "\(name)")
      }
      let verified = try logtool(["server-verify", toolURL(database)])
      #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    }
  }

  /// Stores the first `last` entries of the log in `directory` as version 2 of the library did,
  /// reading them through a handle opened with `ring`.
  func storeAsVersion2(_ client: PostgresClient, _ directory: URL, ring: KeyRing?, upTo last: UInt64) async throws {
    let log = try ActionLog(directory: directory, access: .readOnly, options: .init(keyRing: ring))
    defer { try? log.close() }
    let (id, anchor) = try await registerAsBeforeVersion3(client, log)
    var previous = anchor.hash
    for seq in 1...last {
      let value = try #require(try log.storedValue(seq: seq))
      let entry = try #require(try log.record(at: seq))
      let metadata = try String(decoding: JSONSerialization.data(withJSONObject: entry.metadata), as: UTF8.self)
      try await client.query(
        """
        INSERT INTO chronicle.entries (log_id, seq, kind, flags, type_name, "timestamp", metadata, codec,
          schema_version, payload, payload_json, body, hash, previous_hash)
        VALUES (\(bytea(id)), \(Int64(seq)), \(entry.kind.description), \(Int16(entry.flags.rawValue)),
          \(entry.typeName), 'epoch'::timestamptz + \(entry.timestamp) * interval '1 microsecond', \(metadata)::jsonb,
          \(entry.codec.description), \(Int64(entry.schemaVersion)), \(bytea(entry.payload)), \(try entry.payloadJSON())::jsonb, \(bytea(Array(value.dropLast(32)))),
          \(bytea(entry.hash)), \(bytea(previous)))
        """, logger: quietLogger)
      previous = entry.hash
    }
  }
}
