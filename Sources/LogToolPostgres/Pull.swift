#if Postgres && LogTool
import ArgumentParser
import ChronicleLog
import ChroniclePostgres
import Foundation
import LogToolKit
import PostgresNIO

// MARK: - logtool pull

/// `logtool pull postgres://… LOG-ID DIR`: rebuilds a device's log from what the server holds.
public struct Pull: AsyncParsableCommand {
  /// `pull`.
  public static let configuration = CommandConfiguration(
    abstract: "Rebuild a device's log from PostgreSQL into a new directory.",
    discussion: """
      Writes the server's entries of LOG-ID (and, for a log never compacted, its checkpoints) as an \
      export, then imports it: the entries, their hashes, the log identifier and the Merkle tree come \
      out byte-identical to the device's, checked by the import's verification. An encrypted log \
      comes out encrypted, as the server holds it (export format 3, its entries' ciphertext): no key \
      is needed, and the app's key opens the result. Snapshots are not \
      shipped, so the rebuilt log has none; its schema version is the newest of its entries. DIR must \
      not exist or be empty. Exit 2: a bad URL or LOG-ID, an unusable server, an unknown log, an existing DIR.
      """)

  /// The server.
  @Argument(help: "The server: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
  public var url: String
  /// The log's identifier.
  @Argument(help: "The log identifier: 32 hex digits, as `logtool info` and chronicle.logs show it.")
  public var logID: String
  /// Where the log goes.
  @Argument(help: "The new log's directory (must not exist or be empty).", completion: .directory)
  public var directory: String
  /// The deadline of each step with the server.
  @Option(
    help: ArgumentHelp(
      "Seconds each step with the server may take (connecting, one page of entries); longer ends the command (exit 2).",
      valueName: "seconds"))
  public var timeout: Double = 30
  /// `--json`.
  @OptionGroup public var output: OutputOptions

  /// Creates the command (argument parsing does this).
  public init() {}

  /// Pulls.
  public func run() async throws {
    let address = try ServerAddress(url, timeout: timeout)
    guard let id = [UInt8](hexDigits: logID), id.count == 16 else {
      throw LogToolError.badInput("\(logID): a log identifier is 32 hex digits")
    }
    let target = URL(fileURLWithPath: directory).standardizedFileURL
    try Self.checkDestination(target)
    let parent = target.deletingLastPathComponent()
    let file = parent.appendingPathComponent(".\(target.lastPathComponent).pull-\(getpid()).jsonl")
    defer { try? FileManager.default.removeItem(at: file) }
    try await address.preflight()
    try await withClient(address) { client in
      do {
        try await ServerExport(client: client, address: address, logID: id).write(to: file)
      } catch {
        throw address.failure(error)
      }
    }
    let report = try ActionLog.importLog(from: file, into: target)
    if output.json {
      printOutput(
        jsonLine([
          "logID": logID.lowercased(), "path": target.path, "entries": report.entries,
          "head": ["seq": report.head.seq, "hash": report.head.hash.hexString],
          "checkpoints": report.checkpoints,
        ]))
    } else {
      printOutput(
        "pulled log \(logID.lowercased()) from \(address.display) into \(target.path): \(report.entries) entries, "
          + "head \(report.head.seq), \(report.checkpoints.count) checkpoints; verified")
    }
  }

  /// Refuses a destination that exists and is not an empty directory.
  static func checkDestination(_ target: URL) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: target.path, isDirectory: &isDirectory) else { return }
    guard isDirectory.boolValue else {
      throw LogToolError.badInput("\(target.path): exists and is not a directory; pull writes a new log")
    }
    let contents = (try? FileManager.default.contentsOfDirectory(atPath: target.path)) ?? ["?"]
    guard contents.isEmpty else {
      throw LogToolError.badInput("\(target.path): exists and is not empty; pull writes a new log into a new or empty directory")
    }
  }
}

// MARK: - The server's log as an export

/// Writes what the server holds of one log as an export (`docs/logtool.md`), reading the entries
/// a page at a time: format 2 for a log in the clear, format 3 for an encrypted one, whose entry
/// lines carry the stored ciphertext (`sealedBase64`) and the clear header as the server's columns
/// hold it (the import checks that the two agree).
struct ServerExport {
  let client: PostgresClient
  /// The server, whose deadline each query has.
  let address: ServerAddress
  let logID: [UInt8]
  /// The entries read per query.
  let page = 2_000

  func write(to file: URL) async throws {
    let id = ByteBuffer(bytes: logID)
    let hex = logID.hexString
    let found = try await address.step("reading log \(hex)") { [client] in
      let rows = try await client.query(
        """
        SELECT app, (extract(epoch FROM created) * 1000000)::bigint, anchor_seq, anchor_hash, head_seq, head_hash,
          (SELECT coalesce(max(schema_version), 0) FROM chronicle.entries WHERE log_id = \(id)), format_version
        FROM chronicle.logs WHERE log_id = \(id)
        """, logger: quietLogger)
      var found: (String, Int64, Int64, ByteBuffer, Int64, ByteBuffer, Int64, Int32)?
      for try await row in rows.decode((String, Int64, Int64, ByteBuffer, Int64, ByteBuffer, Int64, Int32).self) {
        found = row
      }
      return found
    }
    guard let (app, created, anchorSeq, anchorHash, headSeq, headHash, schema, format) = found else {
      throw LogToolError.badInput("log \(hex) is not on the server")
    }
    var checkpoints: [(Int64, String)] = []
    if anchorSeq == 0 {
      checkpoints = try await address.step("reading the checkpoints of log \(hex)") { [client] in
        var checkpoints: [(Int64, String)] = []
        let notes = try await client.query(
          "SELECT size, note FROM chronicle.checkpoints WHERE log_id = \(id) AND size <= \(headSeq) ORDER BY size",
          logger: quietLogger)
        for try await row in notes.decode((Int64, String).self) { checkpoints.append(row) }
        return checkpoints
      }
    }

    let encrypted = format >= ActionLog.encryptedFormatVersion
    guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
      throw LogToolError.badInput("\(file.path): cannot create the export file")
    }
    let handle = try FileHandle(forWritingTo: file)
    defer { try? handle.close() }
    var buffer = Data()
    func line(_ object: [String: Any]) throws {
      buffer.append(contentsOf: jsonLine(object).utf8)
      buffer.append(UInt8(ascii: "\n"))
      if buffer.count > 1 << 20 {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
      }
    }
    try line([
      "chronicleExport": encrypted ? ActionLog.encryptedExportFormatVersion : ActionLog.exportFormatVersion,
      "formatVersion": Int(format), "appID": app, "schemaVersion": schema,
      "created": created, "anchor": ["seq": anchorSeq, "hash": Array(anchorHash.readableBytesView).hexString],
      "entries": headSeq - anchorSeq, "snapshots": [Int](),
      "head": ["seq": headSeq, "hash": Array(headHash.readableBytesView).hexString], "logID": hex, "tree": 0,
      "checkpoints": checkpoints.map(\.0),
    ])
    var after = anchorSeq
    while after < headSeq {
      let entries = try await address.step("reading the entries of log \(hex) after \(after)") { [client, after, page] in
        var entries: [(Int64, ByteBuffer, ByteBuffer, Int64?, String, Int16, String, Int64, String, Int64)] = []
        let rows = try await client.query(
          """
          SELECT seq, body, hash, key_id, kind, flags, codec, schema_version, type_name,
            (extract(epoch FROM "timestamp") * 1000000)::bigint
          FROM chronicle.entries WHERE log_id = \(id) AND seq > \(after)
          ORDER BY seq LIMIT \(page)
          """, logger: quietLogger)
        for try await row in rows.decode(
          (Int64, ByteBuffer, ByteBuffer, Int64?, String, Int16, String, Int64, String, Int64).self)
        {
          entries.append(row)
        }
        return entries
      }
      var read = 0
      for (seq, body, hash, keyID, kind, flags, codec, schema, typeName, micros) in entries {
        defer {
          after = seq
          read += 1
        }
        if let keyID, let key = UInt32(exactly: keyID) {
          // Sealed: the stored bytes as they are, never opened.
          var fields: [String: Any] = [
            "record": "entry", "seq": seq, "timestamp": micros, "kind": kind, "flags": Int(flags), "codec": codec,
            "schemaVersion": schema, "keyID": EncryptionKey.idText(key),
            "sealedBase64": Data(body.readableBytesView).base64EncodedString(),
            "hash": Array(hash.readableBytesView).hexString,
          ]
          if !typeName.isEmpty { fields["typeName"] = typeName }
          try line(fields)
          continue
        }
        let entry = try StoredEntry(
          seq: UInt64(seq), storedValue: Array(body.readableBytesView) + Array(hash.readableBytesView))
        try line([
          "record": "entry", "seq": seq, "timestamp": entry.timestamp, "kind": entry.kind.description,
          "flags": Int(entry.flags.rawValue), "codec": entry.codec.description,
          "schemaVersion": Int(entry.schemaVersion), "typeName": entry.typeName, "metadata": entry.metadata,
          "payloadBase64": Data(entry.payload).base64EncodedString(), "hash": entry.hash.hexString,
        ])
      }
      guard read > 0 else {
        throw LogToolError.logProblem("log \(hex): the server holds no entry after \(after), its head is \(headSeq)")
      }
    }
    for (size, note) in checkpoints { try line(["record": "checkpoint", "size": size, "note": note]) }
    try handle.write(contentsOf: buffer)
  }
}
#endif  // Postgres && LogTool
