#if Postgres
import ChronicleLog
import PostgresNIO
import Synchronization

// MARK: - Listening for a stream's appends

/// The listener behind ``PostgresStreamServer/waitForRecords(after:timeout:)``: one task that holds
/// a connection of the client's pool with `LISTEN chronicle_entries` active, learns the stream's
/// head from the notifications (and from a read of the head each time `LISTEN` becomes active, and
/// at each check of the connection), and wakes the waits the head has passed.
///
/// The connection is checked every ``PostgresStreamServer/Options/listenerCheckInterval`` with a
/// small query under the step deadline; a failed or late check closes it, and the task opens
/// another after a delay that doubles up to ``PostgresStreamServer/Options/maxRetryDelay``. Waits
/// never depend on the connection: each ends at its own timeout.
final class StreamListener: Sendable {
  /// The notification channel of the schema (version 6).
  static let channel = "chronicle_entries"

  /// A wait in progress.
  private struct Waiter {
    /// It returns once the head is past this.
    var after: UInt64
    /// Set once it suspended.
    var continuation: CheckedContinuation<Void, Never>?
    /// Woken (the head passed, its timeout, cancellation, close): it returns, or does not suspend.
    var woken = false
  }

  private struct State {
    /// The newest sequence number the stream is known to hold.
    var head: UInt64 = 0
    /// Whether `LISTEN` is active and the head was read after it.
    var listening = false
    var waiters: [Int: Waiter] = [:]
    var nextID = 0
    /// The listening task, from the first wait.
    var task: Task<Void, Never>?
    var closed = false
  }

  private let state = Mutex(State())
  private let client: PostgresClient
  private let stream: SharedStream
  private let options: PostgresStreamServer.Options
  /// The stream's identifier in hex, as the notifications name it.
  private let hex: String

  init(client: PostgresClient, stream: SharedStream, options: PostgresStreamServer.Options) {
    self.client = client
    self.stream = stream
    self.options = options
    self.hex = stream.id.map { String(format: "%02x", $0) }.joined()
  }

  /// Whether `LISTEN` is active and the head was read after it.
  var isListening: Bool { state.withLock { $0.listening } }

  /// Starts the listening task unless it runs.
  ///
  /// - Throws: ``PostgresStreamError/closed(stream:)`` after ``close()``.
  func start() throws {
    let closed = state.withLock { state -> Bool in
      guard !state.closed else { return true }
      if state.task == nil { state.task = Task { [self] in await listen() } }
      return false
    }
    if closed { throw PostgresStreamError.closed(stream: stream.name) }
  }

  /// Stops the task, wakes every wait and waits for the task's end.
  func close() async {
    let task = state.withLock { state -> Task<Void, Never>? in
      state.closed = true
      defer { state.task = nil }
      return state.task
    }
    task?.cancel()
    wakeAll()
    await task?.value
  }

  /// Cancels the task without waiting (the server was released).
  func stop() {
    let task = state.withLock { state -> Task<Void, Never>? in
      state.closed = true
      defer { state.task = nil }
      return state.task
    }
    task?.cancel()
    wakeAll()
  }

  // MARK: Waits

  /// Returns once the head is past `seq`, or after `timeout`.
  func wait(after seq: UInt64, timeout: Duration) async throws {
    let id = state.withLock { state -> Int? in
      guard state.head <= seq, !state.closed else { return nil }
      state.nextID += 1
      state.waiters[state.nextID] = Waiter(after: seq)
      return state.nextID
    }
    guard let id else {
      try Task.checkCancellation()
      return
    }
    defer { _ = state.withLock { $0.waiters.removeValue(forKey: id) } }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { try? await Task.sleep(for: timeout) }
      group.addTask { await self.suspend(id) }
      await group.next()
      group.cancelAll()
    }
    try Task.checkCancellation()
  }

  /// Suspends until wait `id` is woken; a cancellation wakes it.
  private func suspend(_ id: Int) async {
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let woken = state.withLock { state -> Bool in
          guard var waiter = state.waiters[id], !waiter.woken else { return true }
          waiter.continuation = continuation
          state.waiters[id] = waiter
          return false
        }
        if woken { continuation.resume() }
      }
    } onCancel: {
      wake { $0 == id }
    }
  }

  /// Wakes the waits `which` selects (by their identifier and the sequence number they wait past).
  private func wake(_ which: (Int) -> Bool, past head: UInt64? = nil) {
    let continuations = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      var woken: [CheckedContinuation<Void, Never>] = []
      for (id, waiter) in state.waiters where !waiter.woken && which(id) && (head.map { waiter.after < $0 } ?? true) {
        state.waiters[id]?.woken = true
        state.waiters[id]?.continuation = nil
        if let continuation = waiter.continuation { woken.append(continuation) }
      }
      return woken
    }
    for continuation in continuations { continuation.resume() }
  }

  private func wakeAll() { wake { _ in true } }

  /// Records that the stream holds entries up to `seq`; wakes the waits it passed.
  private func learned(head seq: UInt64) {
    let moved = state.withLock { state -> Bool in
      guard seq > state.head else { return false }
      state.head = seq
      return true
    }
    if moved { wake({ _ in true }, past: seq) }
  }

  // MARK: The listening task

  /// Listens until cancelled: a connection of the pool, `LISTEN`, the head read, then the
  /// notifications and the periodic checks; after a failure, again after a delay.
  private func listen() async {
    var delay = options.firstRetryDelay
    while !Task.isCancelled {
      do {
        try await client.withConnection { connection in
          try await connection.listen(on: Self.channel) { notifications in
            try await self.listening(connection, notifications) { delay = self.options.firstRetryDelay }
          }
        }
      } catch {
        // The connection failed, could not be had, or the task was cancelled: try again unless
        // cancelled. The waits end at their timeouts meanwhile.
      }
      state.withLock { $0.listening = false }
      guard !Task.isCancelled else { break }
      try? await Task.sleep(for: delay)
      delay = min(delay * 2, options.maxRetryDelay)
    }
    state.withLock { $0.listening = false }
  }

  /// With `LISTEN` active on `connection`: reads the head (then calls `active`), and follows the
  /// notifications, checking the connection every ``PostgresStreamServer/Options/listenerCheckInterval``,
  /// until the connection fails (a failed or late check closes it) or the task is cancelled.
  private func listening(
    _ connection: PostgresConnection, _ notifications: PostgresNotificationSequence, active: () -> Void
  ) async throws {
    learned(head: try await checkedHead(connection))
    state.withLock { $0.listening = true }
    active()
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for try await notification in notifications { self.received(notification.payload) }
        throw CancellationError()
      }
      group.addTask {
        while true {
          try await Task.sleep(for: self.options.listenerCheckInterval)
          self.learned(head: try await self.checkedHead(connection))
        }
      }
      defer { group.cancelAll() }
      try await group.next()
    }
  }

  /// The stream's head read on `connection` within the step deadline; a failure closes the
  /// connection (a silent one would otherwise go back to the pool).
  private func checkedHead(_ connection: PostgresConnection) async throws -> UInt64 {
    let id = ByteBuffer(bytes: stream.id)
    do {
      return try await withServerDeadline(options.stepTimeout, "reading the head of stream '\(stream.name)'") {
        let rows = try await connection.query(
          "SELECT head_seq FROM chronicle.logs WHERE log_id = \(id)", logger: PostgresLogging.quiet)
        var head: Int64 = 0
        for try await seq in rows.decode(Int64.self) { head = seq }
        return UInt64(max(head, 0))
      }
    } catch {
      if !(error is CancellationError) { try? await connection.close() }
      throw error
    }
  }

  /// A notification's payload, `<log id in hex>:<head>`: the stream's new head if it names it.
  private func received(_ payload: String) {
    guard let colon = payload.lastIndex(of: ":"), payload[..<colon] == hex,
      let seq = UInt64(payload[payload.index(after: colon)...])
    else { return }
    learned(head: seq)
  }
}
#endif  // Postgres
