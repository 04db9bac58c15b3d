import Synchronization

// MARK: - Commit ticket

/// How a staged send's group commit went: resolved once, by the thread that committed it, with the
/// send's sequence numbers or the error that failed its transaction. A synchronous sender reads it
/// after taking the commit lock; an async sender is resumed by it.
@usableFromInline final class CommitTicket: Sendable {
  @usableFromInline typealias Outcome = Result<ClosedRange<UInt64>, ChronicleError>

  private struct State {
    var outcome: Outcome?
    var continuation: CheckedContinuation<ClosedRange<UInt64>, any Error>?
  }

  private let state = Mutex(State())

  @usableFromInline init() {}

  /// Whether the commit happened (or failed).
  @usableFromInline var isResolved: Bool { state.withLock { $0.outcome != nil } }

  /// The send's sequence numbers, or the error that failed it. Only after the ticket is resolved.
  @usableFromInline func result() throws(ChronicleError) -> ClosedRange<UInt64> {
    guard let outcome = state.withLock({ $0.outcome }) else {
      preconditionFailure("a commit ticket was read before its commit")
    }
    return try outcome.get()
  }

  /// Records the outcome and resumes the waiting task, if any. Later calls do nothing.
  @usableFromInline func resolve(_ outcome: Outcome) {
    let continuation = state.withLock { state -> CheckedContinuation<ClosedRange<UInt64>, any Error>? in
      guard state.outcome == nil else { return nil }
      state.outcome = outcome
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(with: outcome.mapError { $0 as any Error })
  }

  /// Resumes `continuation` with the outcome: now if resolved, else when resolved.
  @usableFromInline func whenResolved(_ continuation: CheckedContinuation<ClosedRange<UInt64>, any Error>) {
    let outcome = state.withLock { state -> Outcome? in
      if state.outcome == nil { state.continuation = continuation }
      return state.outcome
    }
    if let outcome { continuation.resume(with: outcome.mapError { $0 as any Error }) }
  }
}
