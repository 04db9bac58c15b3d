#if Postgres
import Synchronization

// MARK: - Deadlines

/// A step of talking to PostgreSQL that did not end within its deadline: getting a connection,
/// one statement or one transaction. The step was abandoned (its transaction rolls back with its
/// connection); the server holds whole batches only.
public struct ServerTimedOut: Error, Sendable, CustomStringConvertible {
  /// What the step was doing, for example `storing entries 1001–2000`.
  public var step: String
  /// The deadline it exceeded.
  public var limit: Duration

  /// Creates the error.
  public init(step: String, limit: Duration) {
    self.step = step
    self.limit = limit
  }

  /// One line: the step, the limit and what to do.
  public var description: String {
    "the server did not answer within \(Self.seconds(limit)) while \(step); check that it is running and reachable"
  }

  /// `limit` in whole seconds (milliseconds below one second).
  static func seconds(_ limit: Duration) -> String {
    limit < .seconds(1) ? "\(limit / .milliseconds(1)) ms" : "\(Int((limit / .seconds(1)).rounded())) s"
  }
}

/// Runs `body` and returns its result, or throws ``ServerTimedOut`` once `limit` has passed, even if
/// `body` does not answer cancellation (a connection a dying server left open, a pool waiting for a
/// connection that never comes): `body` is then cancelled and left behind. Cancelling the caller
/// throws `CancellationError` at once, the same way.
@discardableResult
package func withServerDeadline<T: Sendable>(
  _ limit: Duration, _ step: @autoclosure () -> String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
  let race = FirstResult<T>()
  let work = Task { race.finish(await Result { try await body() }) }
  let timedOut = ServerTimedOut(step: step(), limit: limit)
  let timer = Task {
    try? await Task.sleep(for: limit)
    race.finish(.failure(timedOut))
  }
  defer {
    work.cancel()
    timer.cancel()
  }
  return try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { continuation in race.wait(continuation) }
  } onCancel: {
    race.finish(.failure(CancellationError()))
  }
}

/// The first of a step's result, its deadline and a cancellation, handed to the one waiting.
private final class FirstResult<T: Sendable>: Sendable {
  private struct State {
    var result: Result<T, any Error>?
    var waiter: CheckedContinuation<T, any Error>?
  }

  private let state = Mutex(State())

  /// Records the first result; resumes the waiter if it waits already.
  func finish(_ result: Result<T, any Error>) {
    let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
      guard state.result == nil else { return nil }
      state.result = result
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(with: result)
  }

  /// Resumes `continuation` with the first result, now or when it comes.
  func wait(_ continuation: CheckedContinuation<T, any Error>) {
    let result = state.withLock { state -> Result<T, any Error>? in
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
#endif  // Postgres
