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
  /// would take the app's CPU when they share a machine (docs/postgres.md, *Batches in flight*). Between passes the shipper looks at the device's head every
  /// ``Options/pollInterval`` and only talks to the server when the log has grown or signed a
  /// checkpoint. A failure that may pass (any error of the server or the connection) is reported as
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
    // The device's head and checkpoint count the server is known to hold: no pass until they change.
    var shipped: (head: UInt64, checkpoints: Int)?
    while !Task.isCancelled {
      do {
        let head = try log.head().seq
        let checkpoints = try log.checkpoints().count
        if shipped.map({ $0.head != head || $0.checkpoints != checkpoints }) ?? true {
          let report = try await shipWithin(options.passTimeout, log)
          if failures > 0 { onEvent(.recovered(failures: failures)) }
          failures = 0
          delay = options.firstRetryDelay
          if report.entriesShipped > 0 || report.checkpointsShipped > 0 { onEvent(.shipped(report)) }
          shipped = (head, checkpoints)
        }
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

  /// A ``ship(_:)`` with one batch in flight that fails with ``PassTimedOut`` after `limit`, or with
  /// `CancellationError` when the calling task is cancelled, even if the pass itself does not
  /// answer (a connection left hanging by a server that died mid-query): the pass's task is then
  /// cancelled and left behind.
  func shipWithin(_ limit: Duration, _ log: ActionLog) async throws -> ShipReport {
    let race = PassRace()
    var passOptions = options
    passOptions.batchesInFlight = 1
    let pass = Task { [passOptions] in
      race.finish(await Result { try await LogShipper(client: client, options: passOptions).ship(log) })
    }
    let timer = Task {
      try? await Task.sleep(for: limit)
      race.finish(.failure(PassTimedOut(limit: limit)))
    }
    defer {
      pass.cancel()
      timer.cancel()
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in race.wait(continuation) }
    } onCancel: {
      race.finish(.failure(CancellationError()))
    }
  }

  /// Whether waiting cannot cure `error`: the shipper's own refusals and the log's errors.
  static func isPermanent(_ error: any Error) -> Bool {
    error is ShipError || error is LogError || error is TreeError
  }

  // MARK: - Describing errors

  /// One line for `error`: a ``ShipError``'s description, a server error's SQLSTATE and message
  /// (postgres-nio's own description hides them), a connection error's cause.
  ///
  /// ```swift
  /// do { try await shipper.ship(log) } catch { print(LogShipper.describe(error)) }
  /// ```
  public static func describe(_ error: any Error) -> String {
    guard let error = error as? PSQLError else {
      return "\(error)".replacingOccurrences(of: "\n", with: " ")
    }
    if let message = error.serverInfo?[.message] {
      let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
      let detail = error.serverInfo?[.detail].map { ": \($0)" } ?? ""
      return "the server refused: \(message)\(detail)\(state)"
    }
    let cause = error.underlying.map { ": \($0)" } ?? ""
    switch error.code {
    case .connectionError: return "cannot connect to the server\(cause)"
    case .serverClosedConnection: return "the server closed the connection\(cause)"
    case .uncleanShutdown: return "the connection to the server broke\(cause)"
    default: return "PostgreSQL client error \(error.code)\(cause)"
    }
  }
}

// MARK: - Passes that do not answer

/// A pass of ``LogShipper/follow(_:onEvent:)`` that did not end within ``LogShipper/Options/passTimeout``:
/// it was abandoned and is retried.
public struct PassTimedOut: Error, Sendable, CustomStringConvertible {
  /// The limit the pass exceeded.
  public var limit: Duration

  /// One line.
  public var description: String { "a shipping pass did not end within \(limit); abandoned, retrying" }
}

/// The first of a pass's result, its timeout and a cancellation, handed to the one waiting.
final class PassRace: Sendable {
  private struct State {
    var result: Result<ShipReport, any Error>?
    var waiter: CheckedContinuation<ShipReport, any Error>?
  }

  private let state = Mutex(State())

  /// Records the first result; resumes the waiter if it waits already.
  func finish(_ result: Result<ShipReport, any Error>) {
    let waiter = state.withLock { state -> CheckedContinuation<ShipReport, any Error>? in
      guard state.result == nil else { return nil }
      state.result = result
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(with: result)
  }

  /// Resumes `continuation` with the first result, now or when it comes.
  func wait(_ continuation: CheckedContinuation<ShipReport, any Error>) {
    let result = state.withLock { state -> Result<ShipReport, any Error>? in
      if state.result == nil { state.waiter = continuation }
      return state.result
    }
    if let result { continuation.resume(with: result) }
  }
}

extension Result where Failure == any Error {
  /// The result of `body`.
  init(_ body: () async throws -> Success) async {
    do { self = .success(try await body()) } catch { self = .failure(error) }
  }
}
