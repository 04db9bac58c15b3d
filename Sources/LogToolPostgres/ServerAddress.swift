#if Postgres && LogTool
import ChronicleLog
import ChroniclePostgres
import Foundation
import LogToolKit
import PostgresNIO

// MARK: - The server's address

/// A `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]` URL, as
/// the PostgreSQL commands take it. Without a password in the URL, `PGPASSWORD` is used.
///
/// `sslmode` follows libpq's default and meanings: `prefer` (without it) encrypts when the server
/// offers TLS and goes on in the clear when it does not, without checking the server's certificate
/// (it defeats a passive listener, not an impostor); `require` insists on TLS and also checks the
/// certificate against the system's trusted roots and the host name (libpq's `verify-full`, stricter
/// than its `require`); `disable` never encrypts.
struct ServerAddress: Sendable {
  var host: String
  var port: Int
  var username: String
  var password: String?
  var database: String
  var sslMode: String
  /// The deadline of each step with the server (connecting, one statement, one small
  /// transaction): ``ChroniclePostgres/ServerTimedOut`` after it.
  var timeout: Duration

  /// The address as messages name it: the URL without the password.
  var display: String { "postgres://\(username)@\(host):\(port)/\(database)" }

  /// Parses `text`.
  ///
  /// - Throws: ``LogToolError`` (exit 2) naming what is wrong.
  init(
    _ text: String, timeout seconds: Double, environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws {
    guard seconds > 0, seconds <= 86_400 else {
      throw LogToolError.badInput("--timeout must be more than 0 and at most 86400 seconds (got \(seconds))")
    }
    self.timeout = .milliseconds(Int((seconds * 1_000).rounded(.up)))
    let usage = "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
    guard let url = URLComponents(string: text), let scheme = url.scheme,
      scheme == "postgres" || scheme == "postgresql"
    else { throw LogToolError.badInput("\(Self.redacted(text)): not a PostgreSQL URL (\(usage))") }
    guard let host = url.host, !host.isEmpty else {
      throw LogToolError.badInput("\(Self.redacted(text)): the URL names no host (\(usage))")
    }
    let database = String(url.path.drop { $0 == "/" })
    guard !database.isEmpty, !database.contains("/") else {
      throw LogToolError.badInput("\(Self.redacted(text)): the URL names no database (\(usage))")
    }
    let mode = url.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
    guard ["disable", "prefer", "require"].contains(mode) else {
      throw LogToolError.badInput("\(Self.redacted(text)): sslmode must be disable, prefer or require (got '\(mode)')")
    }
    self.host = host
    self.port = url.port ?? 5432
    self.username = url.user ?? environment["PGUSER"] ?? "postgres"
    self.password = url.password ?? environment["PGPASSWORD"]
    self.database = database
    self.sslMode = mode
  }

  /// `text` with any password replaced by `***`.
  static func redacted(_ text: String) -> String {
    guard var url = URLComponents(string: text), url.password != nil else { return text }
    url.password = "***"
    return url.string ?? text
  }

  /// The TLS configuration of ``sslMode``: `require` checks the server's certificate, `prefer`
  /// (as libpq's) does not.
  private var tlsConfiguration: TLSConfiguration {
    var configuration = TLSConfiguration.makeClientConfiguration()
    if sslMode == "prefer" { configuration.certificateVerification = .none }
    return configuration
  }

  /// postgres-nio's TLS setting for ``sslMode``.
  private func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
    switch sslMode {
    case "require": .require(try .init(configuration: tlsConfiguration))
    case "prefer": .prefer(try .init(configuration: tlsConfiguration))
    default: .disable
    }
  }

  /// A client configuration (connecting times out after ``timeout``, at most 10 s).
  var clientConfiguration: PostgresClient.Configuration {
    var configuration = PostgresClient.Configuration(
      host: host, port: port, username: username, password: password, database: database,
      tls: sslMode == "disable" ? .disable : sslMode == "require" ? .require(tlsConfiguration) : .prefer(tlsConfiguration))
    configuration.options.connectTimeout = min(timeout, .seconds(10))
    return configuration
  }

  /// Connects once, checks the server's Chronicle schema (``PostgresSchema/check(_:)``), or creates
  /// or migrates it with `migrate`, and disconnects: a wrong address, password or schema fails
  /// here, with the server's own reason, before anything is read or written.
  func preflight(migrate: Bool = false) async throws {
    var configuration = PostgresConnection.Configuration(
      host: host, port: port, username: username, password: password, database: database, tls: try connectionTLS())
    configuration.options.connectTimeout = TimeAmount.milliseconds(Int64(min(timeout, .seconds(10)) / .milliseconds(1)))
    let connection: PostgresConnection
    do {
      connection = try await step("connecting") { [configuration] in
        try await PostgresConnection.connect(configuration: configuration, id: 1, logger: quietLogger)
      }
    } catch let error as PSQLError where [.serverClosedConnection, .uncleanShutdown].contains(error.code) {
      // Something accepted the connection and closed it before it answered as PostgreSQL would.
      throw LogToolError.badInput(
        "\(display): cannot connect to the server (the connection closed before PostgreSQL answered); "
          + "check that the host and port are those of a PostgreSQL server")
    } catch {
      throw failure(error)
    }
    do {
      if migrate { try await step("creating or migrating the schema") { try await PostgresSchema.migrate(connection) } }
      try await step("checking the schema") { try await PostgresSchema.check(connection) }
      try? await connection.close()
    } catch {
      try? await connection.close()
      throw failure(error)
    }
  }

  /// Runs `body`, one step with the server, within ``timeout``.
  @discardableResult
  func step<T: Sendable>(
    _ what: @autoclosure () -> String, _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    try await withServerDeadline(timeout, what(), body)
  }

  /// `error` as a command reports it: one line naming the server, exit 2 for a server or
  /// connection that cannot be used, exit 1 for a log the server refused (a fork, a truncated
  /// device log, a broken chain). The log's own errors pass unchanged.
  func failure(_ error: any Error) -> any Error {
    switch error {
    case is LogToolError, is LogError, is TreeError: return error
    case let error as ShipError:
      switch error {
      case .noSchema, .olderSchema, .newerSchema, .noLogID:
        return LogToolError.badInput("\(display): \(error)")
      case .fork, .truncated, .missingEntries, .originMismatch, .brokenLink, .checkpointRefused:
        return LogToolError.logProblem("\(display): \(error)")
      }
    default:
      return LogToolError.badInput("\(display): \(LogShipper.describe(error))")
    }
  }
}

/// The logger the commands give postgres-nio: silent (errors are reported by the commands).
let quietLogger: Logger = {
  var logger = Logger(label: "logtool.postgres")
  logger.logLevel = .critical
  return logger
}()

// MARK: - The client

/// Runs `body` with a running client for `address`, stopped afterwards. The client's end is not
/// waited for: a command ends right after, and a pool left waiting by an outage must not keep it.
func withClient<T: Sendable>(
  _ address: ServerAddress, _ body: @escaping @Sendable (PostgresClient) async throws -> T
) async throws -> T {
  let client = PostgresClient(configuration: address.clientConfiguration, backgroundLogger: quietLogger)
  let running = Task { await client.run() }
  defer { running.cancel() }
  return try await body(client)
}

// MARK: - Output

/// Writes `text` and a newline to standard error.
func printError(_ text: String) {
  FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes `text` and a newline to standard output.
func printOutput(_ text: String) {
  FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// `value` as compact JSON with sorted keys.
func jsonLine(_ value: [String: Any]) -> String {
  let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
  return String(decoding: data, as: UTF8.self)
}

extension Array where Element == UInt8 {
  /// The bytes in lowercase hex.
  var hexString: String { map { String(format: "%02x", $0) }.joined() }

  /// Bytes from hex digits, `nil` if `text` is not an even number of them.
  init?(hexDigits text: String) {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let high = iterator.next() {
      guard let low = iterator.next(), let h = Self.nibble(high), let l = Self.nibble(low) else { return nil }
      bytes.append(h << 4 | l)
    }
    self = bytes
  }

  private static func nibble(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
#endif  // Postgres && LogTool
