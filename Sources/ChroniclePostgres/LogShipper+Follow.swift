#if Postgres
import ChronicleLog
import Foundation
import PostgresNIO
import Synchronization

// MARK: - Events

/// What a following shipper reports while it runs (``LogShipper/follow(_:onEvent:)``).
public enum ShipEvent: Sendable {
  /// A pass stored new entries or checkpoints: how many, and the server's head now.
  case shipped(ShipReport)
  /// A pass failed for a reason that may pass (the server is down or restarting, the connection
  /// broke, a connection could not be made). The server holds whole batches only; the shipper
  /// tries again after `delay`. `attempt` counts the failures in a row, from 1.
  case retrying(error: any Error, attempt: Int, delay: Duration)
  /// A pass succeeded after `failures` failed passes in a row.
  case recovered(failures: Int)
}

// MARK: - Following

extension LogShipper {
  /// Opens the log in `directory` read-only and follows it (see ``follow(_:onEvent:)``) until the
  /// task is cancelled; closes it then.
  public func follow(
    directory: URL, onEvent: @escaping @Sendable (ShipEvent) -> Void = { _ in }
  ) async throws {
    let log = try ActionLog(directory: directory, access: .readOnly, options: Self.readingOptions)
    defer { try? log.close() }
    try await follow(log, onEvent: onEvent)
  }

  /// Ships `log` continuously while an app writes it, until the calling task is cancelled.
  ///
  /// Each pass is a ``ship(_:)``: the entries after the server's head in batches of
  /// ``Options/batchSize`` (so memory stays bounded by a batch however far behind the server is),
  /// then the new checkpoints. A pass keeps one batch on the server at a time, whatever
  /// ``Options/batchesInFlight`` is: a follower runs beside the app, and a second server backend
  /// would take the app's CPU when they share a machine (docs/postgres.md, *Batches in flight*).
  /// Between passes the shipper looks at the device's head every ``Options/pollInterval`` and
  /// ships when the log has grown or signed a checkpoint; otherwise it asks the server every
  /// ``Options/idleCheckInterval`` whether it answers, so that an outage is reported when it
  /// starts. Each step with the server has a deadline (``Options/stepTimeout``). A failure that
  /// may pass (any error of the server or the connection, a ``ServerTimedOut``) is reported as
  /// ``ShipEvent/retrying(error:attempt:delay:)`` and retried after a delay that starts at
  /// ``Options/firstRetryDelay`` and doubles up to ``Options/maxRetryDelay``; the pass that
  /// succeeds again is reported as ``ShipEvent/recovered(failures:)``. The server's head is read
  /// again on every pass, so a crash of either side never stores an entry twice.
  ///
  /// ```swift
  /// let following = Task {
  ///   try await LogShipper(client: client).follow(log) { event in
  ///     if case .retrying(let error, let attempt, let delay) = event {
  ///       print("attempt \(attempt): \(LogShipper.describe(error)); again in \(delay)")
  ///     }
  ///   }
  /// }
  /// // … later:
  /// following.cancel()
  /// ```
  ///
  /// It returns when the task is cancelled (a batch in flight then rolls back).
  ///
  /// - Throws: the failures that do not pass by waiting, which stop following: a ``ShipError``
  ///   (a fork, a truncated device log, a missing or other schema, …) or the log's own errors.
  public func follow(_ log: ActionLog, onEvent: @escaping @Sendable (ShipEvent) -> Void = { _ in }) async throws {
    var failures = 0
    var delay = options.firstRetryDelay
    // A pass keeps one batch on the server at a time.
    var passOptions = options
    passOptions.batchesInFlight = 1
    let pass = LogShipper(client: client, options: passOptions)
    // The device's head and checkpoint count the server is known to hold: no pass until they change.
    var shipped: (head: UInt64, checkpoints: Int)?
    var lastAnswer = ContinuousClock.now
    while !Task.isCancelled {
      do {
        let head = try log.head().seq
        let checkpoints = try log.checkpoints().count
        if shipped.map({ $0.head != head || $0.checkpoints != checkpoints }) ?? true {
          let report = try await pass.ship(log)
          if report.entriesShipped > 0 || report.checkpointsShipped > 0 { onEvent(.shipped(report)) }
          shipped = (head, checkpoints)
        } else if failures > 0 || ContinuousClock.now - lastAnswer >= options.idleCheckInterval {
          // Nothing to ship: the server is asked whether it answers, so that an outage is
          // reported when it starts, not when the log next grows.
          try await pass.checkServer()
        } else {
          try await Task.sleep(for: options.pollInterval)
          continue
        }
        lastAnswer = ContinuousClock.now
        if failures > 0 { onEvent(.recovered(failures: failures)) }
        failures = 0
        delay = options.firstRetryDelay
        try await Task.sleep(for: options.pollInterval)
      } catch {
        if Task.isCancelled || error is CancellationError { return }
        if Self.isPermanent(error) { throw error }
        failures += 1
        onEvent(.retrying(error: error, attempt: failures, delay: delay))
        do { try await Task.sleep(for: delay) } catch { return }
        delay = min(delay * 2, max(options.maxRetryDelay, options.firstRetryDelay))
      }
    }
  }

  /// Asks the server whether it answers (one trivial statement within ``Options/stepTimeout``).
  func checkServer() async throws {
    try await withServerDeadline(options.stepTimeout, "checking that it answers") { [client] in
      _ = try await client.query("SELECT 1", logger: PostgresLogging.quiet).collect()
    }
  }

  /// Whether waiting cannot cure `error`: the shipper's own refusals and the log's errors.
  static func isPermanent(_ error: any Error) -> Bool {
    error is ShipError || error is LogError || error is TreeError
  }

  // MARK: - Describing errors

  /// One line for `error`: a ``ShipError``'s or ``ServerTimedOut``'s description, a server
  /// error's message and SQLSTATE (postgres-nio's own description hides them), a connection
  /// error's cause in plain words (refused, reset, unreachable, no answer, a name that does not
  /// resolve) with what to check.
  ///
  /// ```swift
  /// do { try await shipper.ship(log) } catch { print(LogShipper.describe(error)) }
  /// ```
  public static func describe(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return oneLine(error) }
    if let message = error.serverInfo?[.message] {
      let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
      let detail = error.serverInfo?[.detail].map { ": \($0)" } ?? ""
      return "the server refused: \(message)\(detail)\(state)"
    }
    let check = "check that PostgreSQL runs at this address and accepts connections"
    switch error.code {
    case .connectionError:
      return "cannot connect to the server (\(cause(error.underlying))); \(check)"
    case .serverClosedConnection, .uncleanShutdown:
      let cause = error.underlying.map { " (\(Self.cause($0)))" } ?? ""
      return "the connection to the server broke\(cause): the server stopped, restarted or dropped it"
    case .sslUnsupported:
      return "the server does not accept TLS connections; connect with sslmode=disable or enable ssl on the server"
    case .authMechanismRequiresPassword:
      return "the server asks for a password; give it in the URL or in PGPASSWORD"
    case .unsupportedAuthMechanism, .saslError:
      return "the server asks for an authentication this client cannot do; use password or scram-sha-256 authentication"
    case .poolClosed, .clientClosedConnection:
      return "the connection was closed by this client while it was in use"
    default:
      return "the exchange with the server failed (\(error.code)); \(check)"
    }
  }

  /// A connection failure's cause in plain words.
  static func cause(_ error: (any Error)?) -> String {
    guard let error else { return "no reason given" }
    switch error {
    case let error as NIOConnectionError:
      if let first = error.connectionErrors.first { return cause(first.error) }
      return error.dnsAError != nil || error.dnsAAAAError != nil
        ? "the host name \(error.host) does not resolve" : "no address for \(error.host)"
    case let error as SocketAddressError:
      if case .unknown(let host, _) = error { return "the host name \(host) does not resolve" }
      return oneLine(error)
    case let error as ChannelError:
      if case .connectTimeout(let limit) = error {
        return "nothing answered within \(ServerTimedOut.seconds(.nanoseconds(limit.nanoseconds)))"
      }
      return "the connection was closed"
    case let error as IOError:
      switch error.errnoCode {
      case ECONNREFUSED: return "connection refused: nothing listens on that port"
      case ECONNRESET: return "the connection was reset"
      case ENETUNREACH: return "the network is unreachable"
      case EHOSTUNREACH: return "the host is unreachable"
      case ETIMEDOUT: return "nothing answered"
      default: return String(cString: strerror(error.errnoCode)).lowercased()
      }
    default:
      return oneLine(error)
    }
  }

  /// `error`'s description on one line.
  static func oneLine(_ error: any Error) -> String {
    "\(error)".replacingOccurrences(of: "\n", with: " ")
  }
}
#endif  // Postgres
