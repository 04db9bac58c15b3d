import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Testing
import ChronicleTestTools

// MARK: - Clients and databases

/// A quiet logger for the tests' clients.
let quietLogger: Logger = {
  var logger = Logger(label: "chronicle.postgres.tests")
  logger.logLevel = .critical
  return logger
}()

/// Runs `body` with a running client of a new database of the test cluster; with `migrated`, the
/// database holds the Chronicle schema.
func withDatabase<R>(
  migrated: Bool = true, _ body: (PostgresClient, PostgresServer.Database) async throws -> R
) async throws -> R {
  let database = try await PostgresServer.shared.makeDatabase()
  return try await withClient(database.configuration) { client in
    if migrated { try await PostgresSchema.migrate(client) }
    return try await body(client, database)
  }
}

/// Runs `body` with a running client for `configuration`, shutting it down afterwards.
func withClient<R>(
  _ configuration: PostgresClient.Configuration, _ body: (PostgresClient) async throws -> R
) async throws -> R {
  let client = PostgresClient(configuration: configuration, backgroundLogger: quietLogger)
  return try await withThrowingTaskGroup(of: Void.self, returning: R.self) { group in
    group.addTask { await client.run() }
    defer { group.cancelAll() }
    return try await body(client)
  }
}

/// The first column of every row `query` returns.
func column<T: PostgresDecodable & Sendable>(
  _ client: PostgresClient, _ query: PostgresQuery, as type: T.Type = T.self
) async throws -> [T] {
  var values: [T] = []
  for try await value in try await client.query(query, logger: quietLogger).decode(T.self) { values.append(value) }
  return values
}

/// The single value `query` returns.
func value<T: PostgresDecodable & Sendable>(
  _ client: PostgresClient, _ query: PostgresQuery, as type: T.Type = T.self
) async throws -> T {
  let values = try await column(client, query, as: T.self)
  guard values.count == 1, let first = values.first else { throw ServerError("\(values.count) rows for one value") }
  return first
}

/// The hashes of the entries the server holds, in sequence order.
func serverHashes(_ client: PostgresClient) async throws -> [[UInt8]] {
  try await column(client, "SELECT hash FROM chronicle.entries ORDER BY seq", as: ByteBuffer.self)
    .map { Array($0.readableBytesView) }
}

/// The SQLSTATE of a server error, `nil` for any other error.
func sqlState(_ error: any Error) -> String? {
  (error as? PSQLError)?.serverInfo?[.sqlState]
}

// MARK: - Logs

/// A log in a temporary directory, written by a test.
struct TestLog {
  let directory: TemporaryDirectory
  var url: URL { directory.child("log") }

  init() throws {
    directory = try TemporaryDirectory(prefix: "chronicle-shiplog")
  }

  /// Opens the log for writing (creating it), appends `count` entries made by `entry`, closes it.
  func append(_ count: Int, at url: URL? = nil, _ entry: (Int) throws -> NewEntry = TestLog.deposit) throws {
    let log = try ActionLog(
      directory: url ?? self.url, options: ActionLog.Options(durability: .normal, flushInterval: nil, appID: "ledger"))
    defer { try? log.close() }
    let first = Int(try log.lastSeq) + 1
    _ = try log.append(contentsOf: try (first..<first + count).map(entry))
  }

  /// Opens the log (read-write) for `body`.
  func withLog<R>(at url: URL? = nil, _ body: (ActionLog) throws -> R) throws -> R {
    let log = try ActionLog(
      directory: url ?? self.url, options: ActionLog.Options(durability: .normal, flushInterval: nil, appID: "ledger"))
    defer { try? log.close() }
    return try body(log)
  }

  /// A copy of the log's directory as it is now (the log must be closed): another device holding
  /// the same log.
  func copy(named name: String) throws -> URL {
    let target = directory.child(name)
    try FileManager.default.copyItem(at: url, to: target)
    return target
  }

  /// Entry `i`: a JSON deposit by one of three users.
  static func deposit(_ i: Int) throws -> NewEntry {
    try NewEntry(
      encoding: ["amount": i, "account": i % 7], typeName: "deposit",
      metadata: ["user": ["ann", "bob", "eve"][i % 3], "why": "entry \(i)"], codec: .json)
  }

  /// Entry `i`: a CBOR withdrawal (differs from ``deposit(_:)``: a fork when appended instead).
  static func withdrawal(_ i: Int) throws -> NewEntry {
    try NewEntry(encoding: ["amount": i * 10], typeName: "withdrawal", metadata: ["user": "mallory"], codec: .cbor)
  }

  func remove() { directory.remove() }
}

/// The log's identifier in hex.
func hexID(_ log: ActionLog) throws -> String {
  (try log.logID() ?? []).map { String(format: "%02x", $0) }.joined()
}

/// `bytes` as a bytea parameter.
func bytea(_ bytes: [UInt8]) -> ByteBuffer { ByteBuffer(bytes: bytes) }

/// Records `log` in `chronicle.logs` as versions 1 and 2 of the schema took it (no format version),
/// its head at its anchor; returns its identifier and anchor.
func registerAsBeforeVersion3(_ client: PostgresClient, _ log: ActionLog) async throws -> (id: [UInt8], anchor: ChainAnchor) {
  let id = try #require(try log.logID())
  let anchor = try log.meta().anchor
  try await client.query(
    """
    INSERT INTO chronicle.logs (log_id, origin, app, created, anchor_seq, anchor_hash, head_seq, head_hash)
    VALUES (\(bytea(id)), \(try log.origin()), 'ledger', now(), 0, \(bytea(anchor.hash)), 0, \(bytea(anchor.hash)))
    """, logger: quietLogger)
  return (id, anchor)
}
