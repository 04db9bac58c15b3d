#if Postgres && LogTool
import ArgumentParser
import ChronicleLog
import ChroniclePostgres
import Foundation
import LogToolKit
import PostgresNIO

// MARK: - logtool server-verify

/// `logtool server-verify postgres://… [LOG-ID]`: re-verifies the chains the server holds.
public struct ServerVerify: AsyncParsableCommand {
  /// `server-verify`.
  public static let configuration = CommandConfiguration(
    commandName: "server-verify",
    abstract: "Re-verify on the server the chains of every shipped log, or of one.",
    discussion: """
      For each log, PostgreSQL recomputes every entry's hash from its previous hash, sequence number \
      and bytes, checks that the entries run without a gap from the log's anchor to its recorded head, \
      each linking to the one before, and recomputes the Merkle root of every stored checkpoint \
      (chronicle.tree_root). Each entry's columns that the audit queries read (kind, flags, type_name, \
      timestamp, metadata, codec, schema_version, payload, payload_json, key_id) are compared with \
      what its stored bytes hold. An encrypted log is verified as stored, without its key. Each step \
      has a deadline (--timeout). Exit 0: every log verifies; 1: a problem (each named on standard \
      output); 2: a bad URL or LOG-ID, an unusable or silent server, an unknown log.
      """)

  /// The server.
  @Argument(help: "The server: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
  public var url: String
  /// The log, or every log.
  @Argument(help: "One log identifier (32 hex digits); every log without.")
  public var logID: String?
  /// The deadline of each step with the server.
  @Option(
    help: ArgumentHelp(
      "Seconds each step with the server may take (connecting, one check of one log); longer ends the command (exit 2).",
      valueName: "seconds"))
  public var timeout: Double = 300
  /// `--json`.
  @OptionGroup public var output: OutputOptions

  /// Creates the command (argument parsing does this).
  public init() {}

  /// Verifies.
  public func run() async throws {
    let address = try ServerAddress(url, timeout: timeout)
    var only: [UInt8]?
    if let logID {
      guard let id = [UInt8](hexDigits: logID), id.count == 16 else {
        throw LogToolError.badInput("\(logID): a log identifier is 32 hex digits")
      }
      only = id
    }
    try await address.preflight()
    let results = try await withClient(address) { [only] client in
      do {
        return try await ServerChecks(client: client, address: address).run(only: only)
      } catch {
        throw address.failure(error)
      }
    }
    let problems = results.flatMap(\.problems)
    if output.json {
      let logs: [[String: Any]] = results.map {
        ["logID": $0.logID, "entries": $0.entries, "head": $0.head, "checkpoints": $0.checkpoints,
         "problems": $0.problems, "ok": $0.problems.isEmpty]
      }
      printOutput(jsonLine(["server": address.display, "logs": logs, "ok": problems.isEmpty]))
    } else {
      for result in results {
        if result.problems.isEmpty {
          printOutput(
            "log \(result.logID): \(result.entries) entries up to \(result.head), \(result.checkpoints) checkpoints: ok")
        } else {
          for problem in result.problems { printOutput("log \(result.logID): \(problem)") }
        }
      }
      printOutput(
        problems.isEmpty
          ? "\(results.count) logs verified on \(address.display)"
          : "\(problems.count) problems in \(results.filter { !$0.problems.isEmpty }.count) of \(results.count) logs")
    }
    if !problems.isEmpty { throw ExitCode(LogTool.exitLogProblem) }
  }
}

// MARK: - The checks

/// What ``ServerChecks`` found for one log.
struct ServerLogResult: Sendable {
  var logID: String
  var entries: Int64
  var head: Int64
  var checkpoints: Int
  var problems: [String]
}

/// Re-verifies logs on the server, each check a query PostgreSQL runs.
struct ServerChecks {
  let client: PostgresClient
  /// The server, whose deadline each check has.
  let address: ServerAddress

  func run(only: [UInt8]?) async throws -> [ServerLogResult] {
    let query: PostgresQuery =
      if let only {
        "SELECT log_id, anchor_seq, anchor_hash, head_seq, head_hash FROM chronicle.logs WHERE log_id = \(ByteBuffer(bytes: only))"
      } else {
        "SELECT log_id, anchor_seq, anchor_hash, head_seq, head_hash FROM chronicle.logs ORDER BY log_id"
      }
    let logs = try await address.step("listing its logs") { [client] in
      var logs: [(ByteBuffer, Int64, ByteBuffer, Int64, ByteBuffer)] = []
      for try await row in try await client.query(query, logger: quietLogger).decode(
        (ByteBuffer, Int64, ByteBuffer, Int64, ByteBuffer).self)
      {
        logs.append(row)
      }
      return logs
    }
    if let only, logs.isEmpty { throw LogToolError.badInput("log \(only.hexString) is not on the server") }
    var results: [ServerLogResult] = []
    for (id, anchorSeq, anchorHash, headSeq, headHash) in logs {
      results.append(try await check(id, anchorSeq: anchorSeq, anchorHash: anchorHash, head: headSeq, headHash: headHash))
    }
    return results
  }

  /// The checks of one log, each a step within the server's deadline.
  func check(
    _ id: ByteBuffer, anchorSeq: Int64, anchorHash: ByteBuffer, head: Int64, headHash: ByteBuffer
  ) async throws -> ServerLogResult {
    let hex = Array(id.readableBytesView).hexString
    var problems: [String] = []
    // Every entry: its hash recomputed, its link to the entry before (the anchor for the first), no gap.
    problems += try await address.step("checking the chain of log \(hex)") { [client] in
      var problems: [String] = []
      let chain = try await client.query(
        """
        SELECT seq, expected_seq,
          hash <> sha256(previous_hash || int8send(seq) || body) AS bad_hash,
          previous_hash IS DISTINCT FROM coalesce(before, \(anchorHash)) AS bad_link
        FROM (
          SELECT seq, hash, previous_hash, body, lag(hash) OVER w AS before,
            coalesce(lag(seq) OVER w, \(anchorSeq)) + 1 AS expected_seq
          FROM chronicle.entries WHERE log_id = \(id) WINDOW w AS (ORDER BY seq)) e
        WHERE seq <> expected_seq OR hash <> sha256(previous_hash || int8send(seq) || body)
          OR previous_hash IS DISTINCT FROM coalesce(before, \(anchorHash))
        ORDER BY seq LIMIT 20
        """, logger: quietLogger)
      for try await (seq, expected, badHash, badLink) in chain.decode((Int64, Int64, Bool, Bool).self) {
        if seq != expected { problems.append("entry \(expected) is missing (the next stored entry is \(seq))") }
        if badHash { problems.append("entry \(seq): its hash is not the hash of its bytes and previous hash") }
        if badLink { problems.append("entry \(seq): its previous hash is not the hash of entry \(seq - 1)") }
      }
      return problems
    }
    // Every entry's derived columns (kind, type name, timestamp, metadata, payload, payload JSON,
    // key identifier): what its stored bytes hold. At most 20 named, as above.
    var after = anchorSeq
    var columnProblems: [String] = []
    while columnProblems.count < 20 {
      let page = try await address.step("checking the columns of log \(hex) after entry \(after)") {
        [client, after] in
        try await StoredColumnsCheck(client: client, logID: Array(id.readableBytesView)).check(after: after)
      }
      guard let last = page.last else { break }
      columnProblems += page.problems
      after = last
    }
    problems += columnProblems.prefix(20)
    // The recorded head: the last entry, with its hash.
    let (entries, headProblem) = try await address.step("reading the head of log \(hex)") {
      [client] () async throws -> (Int64, String?) in
      let last = try await client.query(
        """
        SELECT count(*), max(seq), (SELECT hash FROM chronicle.entries WHERE log_id = \(id) ORDER BY seq DESC LIMIT 1)
        FROM chronicle.entries WHERE log_id = \(id)
        """, logger: quietLogger)
      for try await (count, maximum, hash) in last.decode((Int64, Int64?, ByteBuffer?).self) {
        let lastSeq = maximum ?? anchorSeq
        let lastHash = hash ?? anchorHash
        if lastSeq != head || lastHash != headHash {
          return (count, "the recorded head \(head) is not the last stored entry (\(lastSeq)) or its hash")
        }
        return (count, nil)
      }
      return (0, nil)
    }
    if let headProblem { problems.append(headProblem) }
    // Every checkpoint: its root recomputed from the stored entries.
    let (checkpoints, checkpointProblems) = try await address.step("checking the checkpoints of log \(hex)") {
      [client] () async throws -> (Int, [String]) in
      var (checkpoints, problems) = (0, [String]())
      let roots = try await client.query(
        """
        SELECT size, root = chronicle.tree_root(log_id, size)
        FROM chronicle.checkpoints WHERE log_id = \(id) ORDER BY size
        """, logger: quietLogger)
      do {
        for try await (size, matches) in roots.decode((Int64, Bool).self) {
          checkpoints += 1
          if !matches { problems.append("the checkpoint of size \(size) has a root the stored entries do not produce") }
        }
      } catch let error as PSQLError where error.serverInfo?[.sqlState] == "CH005" {
        problems.append(error.serverInfo?[.message] ?? "a checkpoint's root cannot be recomputed")
      }
      return (checkpoints, problems)
    }
    problems += checkpointProblems
    return ServerLogResult(logID: hex, entries: entries, head: head, checkpoints: checkpoints, problems: problems)
  }
}
#endif  // Postgres && LogTool
