import ChronicleLog
import Foundation

extension SharedStore {
  /// One sync round: pulls every entry the server holds after the device's head, in batches of
  /// ``SharedStoreOptions/pullBatchSize`` (calling `progress` after each), rebases the pending
  /// actions on them, and pushes the pending actions where they continue the server's head. When
  /// another device pushed first, it pulls again, rebases and tries again, until nothing is pending.
  ///
  /// Pushed entries count as sent only once the server acknowledged them and the device appended
  /// them; a push whose answer was lost is recognised at the next pull (the device's own entries
  /// come back with its name and outbox numbers), so no action enters the stream twice.
  ///
  /// - Throws: the server's errors (the device keeps everything it holds and tries again at the
  ///   next round), ``ChronicleError/closed``, ``ChronicleError/unsupported(_:)`` when a round is
  ///   already running, or the error that stopped the store (an entry it cannot fold).
  @discardableResult
  public func sync(with server: some StreamServer, progress: (@Sendable (SyncReport) -> Void)? = nil) async throws
    -> SyncReport
  {
    let started = syncing.withLock { running in
      defer { running = true }
      return !running
    }
    guard started else { throw ChronicleError.unsupported("a sync of \(path) is already running; rounds run one at a time") }
    defer { syncing.withLock { $0 = false } }
    var report = SyncReport()
    do {
      try await runRound(server, &report, progress)
      record(SharedStreamStatus.SyncState(serverHead: report.head, lastContact: Date(), lastError: nil, online: true))
    } catch {
      let last = lastSync.withLock { $0 }
      record(
        SharedStreamStatus.SyncState(
          serverHead: last?.serverHead ?? 0, lastContact: last?.lastContact, lastError: "\(error)", online: false))
      throw error
    }
    return report
  }

  private func runRound(
    _ server: some StreamServer, _ report: inout SyncReport, _ progress: (@Sendable (SyncReport) -> Void)?
  ) async throws {
    var pulledNothingAfterRefusal = false
    while true {
      try Task.checkCancellation()
      var pulled = 0
      while true {
        let records = try await server.records(after: try currentHead().seq, limit: options.pullBatchSize)
        guard !records.isEmpty else { break }
        try receive(records, report: &report)
        pulled += records.count
        progress?(report)
        if records.count < options.pullBatchSize { break }
      }
      if pulled == 0, pulledNothingAfterRefusal { try await checkServerHoldsHead(server) }
      guard let push = try preparePush() else { break }
      let appended: Bool
      do {
        appended = try await server.append(push.records, previousHash: push.previous)
      } catch {
        // A push that does not link is refused outright: say why, if the server lost the device's head.
        try await checkServerHoldsHead(server)
        throw error
      }
      if appended {
        try receive(push.records, report: &report)
        progress?(report)
        pulledNothingAfterRefusal = false
      } else {
        report.retries += 1
        pulledNothingAfterRefusal = true
      }
    }
    report.head = head.seq
  }

  /// After a push the server refused as behind its head, and a pull that found nothing after the
  /// device's head: the server does not hold that head (restored from a backup) or holds another
  /// entry there (changed behind its checks).
  private func checkServerHoldsHead(_ server: some StreamServer) async throws {
    let head = try currentHead()
    guard head.seq > 0 else { return }
    let found = try await server.records(after: head.seq - 1, limit: 1).first
    guard let found, found.seq == head.seq else {
      throw SyncError.serverBehind(path: path, serverHead: nil, deviceHead: head.seq)
    }
    if found.hash != head.hash { throw SyncError.forked(path: path, seq: head.seq) }
  }

  /// Keeps what the last round saw, and writes it to the outbox's `sync.json` for `logtool
  /// sync-status` and the inspector (a failure to write it is not the sync's).
  func record(_ state: SharedStreamStatus.SyncState) {
    lastSync.withLock { $0 = state }
    try? SharedStreamStatus.SyncState.write(state, to: URL(fileURLWithPath: path))
  }

  /// Keeps the store in sync with `server` until the calling task is cancelled or the store is
  /// closed: a round at once, then one whenever the server announces new entries or this device
  /// sends. An outage is retried after a delay that doubles up to 30 seconds; `onError` hears of
  /// each failed round. Run it in a task the app owns:
  ///
  /// ```swift
  /// let syncing = Task { await store.syncContinuously(with: server) }
  /// …
  /// syncing.cancel()
  /// ```
  public func syncContinuously(
    with server: some StreamServer, progress: (@Sendable (SyncReport) -> Void)? = nil,
    onError: (@Sendable (any Error) -> Void)? = nil
  ) async {
    var delay = Duration.milliseconds(250)
    while !Task.isCancelled, !core.withLock({ $0.isClosed }) {
      do {
        try await sync(with: server, progress: progress)
        delay = .milliseconds(250)
        let head = head.seq
        await withTaskGroup(of: Void.self) { group in
          group.addTask { try? await server.waitForRecords(after: head, timeout: .seconds(30)) }
          group.addTask { await self.doorbell.wait() }
          await group.next()
          group.cancelAll()
        }
      } catch is CancellationError {
        return
      } catch {
        if core.withLock({ $0.isClosed }) { return }
        onError?(error)
        try? await Task.sleep(for: delay)
        delay = min(delay * 2, .seconds(30))
      }
    }
  }

  /// The device's head, or the error that stopped the store.
  func currentHead() throws(ChronicleError) -> ChainAnchor {
    try core.withLock { core throws(ChronicleError) in
      guard !core.isClosed else { throw .closed }
      if let failure = core.failure { throw failure }
      return core.head
    }
  }

  /// The records of the next push and the hash they continue, or `nil` when nothing is pending.
  func preparePush() throws -> (records: [StreamRecord], previous: [UInt8])? {
    try core.withLock { core in
      guard !core.isClosed else { throw ChronicleError.closed }
      if let failure = core.failure { throw failure }
      guard !core.pending.isEmpty else { return nil }
      let records = try mirror.records(encoding: entriesToPush(core), after: core.head, device: device)
      return (records, core.head.hash)
    }
  }

  /// Appends stream records to the device's copy, folds them, settles this device's actions among
  /// them, rebases the rest and tells observers.
  func receive(_ records: [StreamRecord], report: inout SyncReport) throws {
    let (old, new, own) = try core.withLock { core in
      guard !core.isClosed else { throw ChronicleError.closed }
      if let failure = core.failure { throw failure }
      let range: ClosedRange<UInt64>
      do {
        range = try mirror.append(records: records)
      } catch LogError.invalidEntry(let reason) where reason.contains("does not carry the chain hash") {
        throw SyncError.forked(path: path, seq: core.head.seq)
      }
      core.head = try mirror.head()
      var confirmed = core.confirmed
      var settled: (through: UInt64, stream: UInt64)?
      var own: [Rejection<Action>] = []
      var newReverts = false
      // Only this device's own actions, pushed as themselves: the pending ones after them were
      // reduced on exactly this state already, and need no rebase.
      var onlyOwnActions = true
      do {
        try mirror.forEach(in: range) { entry in
          if entry.kind != .action || ownPendingSeq(entry) == nil { onlyOwnActions = false }
          try Self.fold(entry, into: &confirmed, reducer: reducer)
          let revert = Self.revert(in: entry)
          if let revert {
            core.reverts.append(revert)
            newReverts = true
          }
          if let seq = ownPendingSeq(entry) {
            settled = (seq, entry.seq)
            if let rejection = try rejection(in: entry) {
              own.append(rejection)
            } else if let id = Self.identity(entry.metadata) {
              core.own.append(Own(id: id, revert: revert))
            }
          }
        }
        // A revert takes back an earlier action: fold the copy again without it.
        if newReverts { confirmed = try fold(through: core.head.seq, skipping: Revert.takenBack(by: core.reverts)) }
      } catch {
        // The copy holds the entries, but the state cannot follow them: the store stops here.
        let failure = ChronicleError(error)
        core.failure = failure
        throw failure
      }
      core.confirmed = confirmed
      let old = core.state
      if let settled {
        let count = core.pending.prefix { $0.seq <= settled.through }.count
        report.pushed += count - own.count
        report.rejected += own.count
        try settle(through: settled.through, stream: settled.stream, &core)
      }
      if !onlyOwnActions || newReverts { try rebase(&core) }
      return (old, core.state, own)
    }
    report.received += records.count
    report.head = records.last?.seq ?? report.head
    delivery.post(old: old, new: new, rejections: own)
  }
}
