import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Testing
import ChronicleTestTools

// MARK: - logtool ship, pull, server-verify

/// A URL of `database` for `logtool`.
func toolURL(_ database: PostgresServer.Database, password: String = PostgresServer.password) -> String {
  "postgres://postgres:\(password)@127.0.0.1:\(database.port)/\(database.name)"
}

/// Runs the built `logtool` to its end.
/// Rebuilds log `id` from the server at `url` into `copy` with `logtool pull`, and checks that it
/// is the log in `original` byte for byte (entries, meta with the log identifier and format, tree,
/// checkpoints) and that `logtool verify` passes on it. Returns what `pull` printed.
func pullByteIdentical(_ url: String, _ id: String, of original: URL, into copy: URL) throws -> String {
  let pulled = try logtool(["pull", url, id, copy.path])
  #expect(pulled.status == 0, "\(pulled.stderr)")
  let rebuilt = try RawDump(copy)
  let device = try RawDump(original)
  #expect(rebuilt.entries == device.entries)
  #expect(rebuilt.meta == device.meta, "the meta, the log identifier and format included")
  for name in ["tree", "checkpoints"] {
    #expect(try RawDump.treeDatabase(name, of: copy) == RawDump.treeDatabase(name, of: original), "\(name)")
  }
  let verified = try logtool(["verify", copy.path])
  #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
  return pulled.stdout
}

func logtool(_ arguments: [String]) throws -> ChildResult {
  let result = try ChildProcess.run("logtool", arguments, timeout: 120)
  if result.timedOut { Issue.record("logtool \(arguments.joined(separator: " ")) did not end within 120 s") }
  return result
}

@Suite(.needsPostgres) struct ToolTests {
  /// `ship` stores the log, `pull` rebuilds it byte for byte (entries, meta with the log
  /// identifier, Merkle tree, checkpoints), `verify` passes on the copy, `server-verify` passes,
  /// and `pull` refuses a directory that is not empty.
  @Test func shipThenPullRebuildsTheLogByteIdentical() async throws {
    let device = try TestLog()
    defer { device.remove() }
    let signer = try NoteSigner(name: "ledger.test/device", seed: Array(repeating: 3, count: 32))
    try device.append(1_234)
    try device.withLog { _ = try $0.signCheckpoint(with: signer) }
    try device.append(66)
    try device.withLog { _ = try $0.signCheckpoint(with: signer) }
    let id = try device.withLog { try hexID($0) }
    let database = try await PostgresServer.shared.makeDatabase()
    let url = toolURL(database)

    let shipped = try logtool(["ship", device.url.path, "--to", url, "--migrate", "--batch-size", "500", "--json"])
    #expect(shipped.status == 0, "\(shipped.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(shipped.stdout.utf8)) as? [String: Any]
    #expect(report?["entriesShipped"] as? Int == 1_300)
    #expect(report?["batches"] as? Int == 3)
    #expect(report?["checkpointsShipped"] as? Int == 2)
    #expect(report?["logID"] as? String == id)
    // Progress on standard error: after the first batch (then at most once a second).
    let progress = try JSONSerialization.jsonObject(with: Data((shipped.errorLines.first ?? "").utf8)) as? [String: Any]
    #expect(progress?["event"] as? String == "progress", "\(shipped.stderr)")
    #expect(progress?["entries"] as? Int == 500 && progress?["serverHead"] as? Int == 500, "\(shipped.stderr)")

    let again = try logtool(["ship", device.url.path, "--to", url])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(again.stderr.isEmpty, "nothing to ship, no progress: \(again.stderr)")
    #expect(again.stdout.contains("shipped 0 entries in 0 batches and 0 checkpoints"), "\(again.stdout)")

    let copy = device.directory.child("pulled")
    let pulled = try pullByteIdentical(url, id, of: device.url, into: copy)
    #expect(pulled.contains("1300 entries, head 1300, 2 checkpoints"), "\(pulled)")
    let serverVerified = try logtool(["server-verify", url, id])
    #expect(serverVerified.status == 0, "\(serverVerified.stdout) \(serverVerified.stderr)")
    #expect(serverVerified.stdout.contains("1300 entries up to 1300, 2 checkpoints: ok"), "\(serverVerified.stdout)")

    let rebuilt = try RawDump(copy)
    let refused = try logtool(["pull", url, id, copy.path])
    #expect(refused.status == 2)
    #expect(refused.errorLines.count == 1 && refused.stderr.contains("is not empty"), "\(refused.stderr)")
    #expect(try RawDump(copy) == rebuilt)
  }

  /// `ship --follow` ships what the log holds, then what is appended, reporting each pass on
  /// standard error, and ends with exit 0 and its totals on SIGTERM.
  @Test func shipFollowShipsNewEntriesUntilTerminated() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(30)
    let database = try await PostgresServer.shared.makeDatabase()
    let child = try ChildProcess(
      "logtool", ["ship", device.url.path, "--to", toolURL(database), "--migrate", "--follow"], errors: .capture)
    let errors = try #require(child.errors)
    #expect(errors.waitFor(timeout: 60) { $0.contains { $0.text.contains("server head 30") } }, "\(errors.text)")
    try device.append(12)
    #expect(errors.waitFor(timeout: 60) { $0.contains { $0.text.contains("server head 42") } }, "\(errors.text)")
    child.process.terminate()
    #expect(child.wait(timeout: 60) == 0, "\(errors.text)")
    #expect(child.output.text.contains("shipped 42 entries"), "\(child.output.text)")
    let stored = try await withClient(database.configuration) { client in
      try await value(client, "SELECT count(*) FROM chronicle.entries", as: Int64.self)
    }
    #expect(stored == 42)
  }

  /// A wrong URL, a wrong password, a server without the schema and one with a newer schema: one
  /// line each, exit 2, and nothing written on the server or on disk, for each command.
  @Test func badServersAreOneLineExitTwoAndNothingIsWritten() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(20)
    let id = try device.withLog { try hexID($0) }
    let bare = try await PostgresServer.shared.makeDatabase()
    let newer = try await PostgresServer.shared.makeDatabase()
    try await withClient(newer.configuration) { client in
      try await PostgresSchema.migrate(client)
      try await client.query("INSERT INTO chronicle.chronicle_schema (version) VALUES (99)", logger: quietLogger)
    }
    let cases: [(url: String, says: String)] = [
      ("http://127.0.0.1:\(bare.port)/\(bare.name)", "not a PostgreSQL URL"),
      ("postgres://127.0.0.1:\(bare.port)", "names no database"),
      (toolURL(bare, password: "wrong"), "password authentication failed"),
      ("postgres://postgres:x@127.0.0.1:1/\(bare.name)", "cannot connect to the server (connection refused"),
      ("postgres://postgres:x@no-such-host.invalid/\(bare.name)", "the host name no-such-host.invalid does not resolve"),
      (toolURL(bare), "no Chronicle schema"),
      (toolURL(newer), "version 99, newer than the version"),
    ]
    let destination = device.directory.child("pulled")
    for (url, says) in cases {
      for arguments in [
        ["ship", device.url.path, "--to", url], ["pull", url, id, destination.path], ["server-verify", url],
      ] {
        let result = try logtool(arguments)
        let command = "\(arguments[0]) \(url)"
        #expect(result.status == 2, "\(command): \(result.stdout) \(result.stderr)")
        #expect(result.errorLines.count == 1, "\(command): \(result.stderr)")
        #expect(result.stderr.contains(says), "\(command): \(result.stderr)")
        #expect(!result.stderr.contains(":wrong@") && !result.stderr.contains(PostgresServer.password), "\(command)")
        // The network library's own words stay out of it.
        for raw in ["errno", "SingleConnectionFailure", "descriptor", "NIOConnectionError"] {
          #expect(!result.stderr.contains(raw), "\(command): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path), "\(command)")
      }
    }
    let noSchema = try await withClient(bare.configuration) { client in
      try await value(client, "SELECT to_regnamespace('chronicle') IS NULL", as: Bool.self)
    }
    #expect(noSchema, "the schema was created on a server without it")
    let logs = try await withClient(newer.configuration) { client in
      try await value(client, "SELECT count(*) FROM chronicle.logs", as: Int64.self)
    }
    #expect(logs == 0)
    // An unknown log, and a malformed identifier.
    let missing = try logtool(["pull", toolURL(newer), String(repeating: "ab", count: 16), destination.path])
    #expect(missing.status == 2 && missing.errorLines.count == 1, "\(missing.stderr)")
    let malformed = try logtool(["pull", toolURL(bare), "xyz", destination.path])
    #expect(malformed.status == 2 && malformed.stderr.contains("32 hex digits"), "\(malformed.stderr)")
  }

  /// `server-verify` finds an entry changed on the server behind the checks' back, and a
  /// checkpoint the stored entries do not produce; exit 1, each named.
  @Test func serverVerifyFindsATamperedEntryAndAForgedCheckpoint() async throws {
    let device = try TestLog()
    defer { device.remove() }
    let signer = try NoteSigner(name: "ledger.test/device", seed: Array(repeating: 5, count: 32))
    try device.append(10)
    try device.withLog { _ = try $0.signCheckpoint(with: signer) }
    try device.append(30)
    let (id, idHex, origin) = try device.withLog { (try #require(try $0.logID()), try hexID($0), try $0.origin()) }
    try await withDatabase { client, database in
      _ = try await LogShipper(client: client).ship(directory: device.url)
      let clean = try logtool(["server-verify", toolURL(database), "--json"])
      #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")
      #expect(clean.stdout.contains("\"ok\":true"), "\(clean.stdout)")

      // A superuser goes around the append-only and checkpoint triggers.
      try await client.query("ALTER TABLE chronicle.entries DISABLE TRIGGER entries_append_only", logger: quietLogger)
      try await client.query(
        "UPDATE chronicle.entries SET body = body || '\\x00'::bytea WHERE log_id = \(bytea(id)) AND seq = 17",
        logger: quietLogger)
      try await client.query("ALTER TABLE chronicle.checkpoints DISABLE TRIGGER checkpoints_check", logger: quietLogger)
      var note = SignedNote(text: Checkpoint(origin: origin, size: 30, rootHash: Array(repeating: 9, count: 32)).text)
      try note.sign(with: signer)
      try await client.query(
        """
        INSERT INTO chronicle.checkpoints (log_id, size, root, note)
        VALUES (\(bytea(id)), 30, \(bytea(Array(repeating: 9, count: 32))), \(String(decoding: note.formatted, as: UTF8.self)))
        """, logger: quietLogger)

      let result = try logtool(["server-verify", toolURL(database), idHex])
      #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
      #expect(result.stdout.contains("log \(idHex): entry 17: its hash is not the hash of its bytes"), "\(result.stdout)")
      #expect(result.stdout.contains("checkpoint of size 30 has a root the stored entries do not produce"), "\(result.stdout)")
      #expect(!result.stdout.contains("checkpoint of size 10"), "the genuine checkpoint verifies: \(result.stdout)")
    }
  }

  /// `server-verify` checks the columns the audit queries read against each entry's stored bytes:
  /// a payload, payload JSON, metadata, type name, timestamp, kind or key column changed behind
  /// the triggers' back is named with its entry, although the chain (body and hash) still holds.
  @Test func serverVerifyFindsAChangedDerivedColumn() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(30)
    let (id, idHex) = try device.withLog { (try #require(try $0.logID()), try hexID($0)) }
    try await withDatabase { client, database in
      _ = try await LogShipper(client: client).ship(directory: device.url)
      let clean = try logtool(["server-verify", toolURL(database), idHex])
      #expect(clean.status == 0, "\(clean.stdout) \(clean.stderr)")

      try await client.query("ALTER TABLE chronicle.entries DISABLE TRIGGER entries_append_only", logger: quietLogger)
      let changes: [(seq: Int, set: String, column: String)] = [
        (3, "payload_json = '{\"amount\": 3000, \"account\": 3}'", "payload_json"),
        (4, "payload = '\\x7b7d'::bytea", "payload"),
        (5, "metadata = '{\"user\": \"mallory\", \"why\": \"entry 5\"}'", "metadata"),
        (6, "type_name = 'withdrawal'", "type_name"),
        (7, "\"timestamp\" = \"timestamp\" + interval '1 day'", "timestamp"),
        (8, "kind = 'undo'", "kind"),
        (9, "key_id = 7", "key_id"),
      ]
      for change in changes {
        try await client.query(
          PostgresQuery(
            unsafeSQL: "UPDATE chronicle.entries SET \(change.set) WHERE log_id = $1 AND seq = \(change.seq)",
            binds: { var binds = PostgresBindings(); binds.append(ByteBuffer(bytes: id)); return binds }()),
          logger: quietLogger)
      }
      // Rewritten as jsonb writes it, metadata with the same pairs is the same.
      try await client.query(
        "UPDATE chronicle.entries SET metadata = metadata::text::jsonb WHERE log_id = \(bytea(id)) AND seq = 10",
        logger: quietLogger)

      let result = try logtool(["server-verify", toolURL(database), idHex])
      #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
      for change in changes {
        #expect(
          result.stdout.contains("log \(idHex): entry \(change.seq): \(change.column) is not what its stored bytes hold"),
          "\(result.stdout)")
      }
      #expect(!result.stdout.contains("entry 10"), "\(result.stdout)")
      #expect(!result.stdout.contains("its hash is not"), "the chain still holds: \(result.stdout)")
    }
  }

  /// The committed features fixtures, compacted at 37 with checkpoints signed at 20, 37, 50, 80 and
  /// 100, ship with exit 0: the server checks the checkpoints from the anchor on against the
  /// anchor's subtree hashes, the one of 20 stays on the device, a second ship sends nothing, and
  /// `server-verify` and the documented root query pass.
  @Test(arguments: ["v1-features", "v1-compacted-checkpoints"])
  func aCompactedFixtureShipsWithItsCheckpoints(_ fixture: String) async throws {
    let scratch = try TemporaryDirectory(prefix: "chronicle-fixture-ship")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try FileManager.default.copyItem(at: Fixtures.directory(fixture), to: log)
    try await withDatabase { client, database in
      let url = toolURL(database)
      let first = try logtool(["ship", log.path, "--to", url, "--json"])
      #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
      #expect(first.stdout.contains("\"checkpointsShipped\":4"), "\(first.stdout)")
      let again = try logtool(["ship", log.path, "--to", url, "--json"])
      #expect(again.status == 0 && again.stdout.contains("\"checkpointsShipped\":0"), "\(again.stdout) \(again.stderr)")
      let sizes = try await column(client, "SELECT size FROM chronicle.checkpoints ORDER BY size", as: Int64.self)
      #expect(sizes == [37, 50, 80, 100])
      let verified = try logtool(["server-verify", url])
      #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
      let root = try await value(
        client,
        """
        SELECT encode(chronicle.tree_root(log_id, head_seq), 'hex') FROM chronicle.logs
        WHERE anchor_seq = 0 OR anchor_subtrees IS NOT NULL
        """, as: String.self)
      let device = try ActionLog(directory: log, access: .readOnly)
      defer { try? device.close() }
      #expect(root == (try device.treeRoot(size: 100)).map { String(format: "%02x", $0) }.joined())
    }
  }
}
