import Dispatch
import Synchronization

// MARK: - Commit ticket

/// How a staged send's group commit went: resolved once, by the thread that committed it, with the
/// send's sequence numbers or the error that failed its transaction. A synchronous sender waits on
/// it (``waitForCommit()``), which also tells it when the lead of the commits is handed to it; an
/// async sender is resumed by it.
@usableFromInline final class CommitTicket: Sendable {
  @usableFromInline typealias Outcome = Result<ClosedRange<UInt64>, ChronicleError>

  private struct State {
    var outcome: Outcome?
    var continuation: CheckedContinuation<ClosedRange<UInt64>, any Error>?
    /// Whether the thread leading the commits handed the lead to this send's thread.
    var leads = false
    /// What the send's thread sleeps on in ``waitForCommit()``.
    var waiter: DispatchSemaphore?
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

  /// Records the outcome and resumes the waiting task or thread, if any. Later calls do nothing.
  @usableFromInline func resolve(_ outcome: Outcome) {
    let (continuation, waiter) = state.withLock {
      state -> (CheckedContinuation<ClosedRange<UInt64>, any Error>?, DispatchSemaphore?) in
      guard state.outcome == nil else { return (nil, nil) }
      state.outcome = outcome
      defer {
        state.continuation = nil
        state.waiter = nil
      }
      return (state.continuation, state.waiter)
    }
    waiter?.signal()
    continuation?.resume(with: outcome.mapError { $0 as any Error })
  }

  /// Hands the lead of the commits to this send's thread, waking it if it waits.
  @usableFromInline func handCommit() {
    let waiter = state.withLock { state -> DispatchSemaphore? in
      state.leads = true
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.signal()
  }

  /// Blocks the calling thread until the ticket is resolved or the lead of the commits is handed to
  /// it. Returns whether it leads them now (it must then commit, ``Store/leadCommits(_:)``, even
  /// if its own send was committed meanwhile).
  @usableFromInline func waitForCommit() -> Bool {
    let waiter = state.withLock { state -> DispatchSemaphore? in
      guard state.outcome == nil, !state.leads else { return nil }
      let waiter = DispatchSemaphore(value: 0)
      state.waiter = waiter
      return waiter
    }
    waiter?.wait()
    return state.withLock { $0.leads }
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
