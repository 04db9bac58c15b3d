import ChronicleLog
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import ChroniclePostgres

// MARK: - Batches in flight

/// The batch statement with two of a log's batches on the server at once (``LogShipper/Options/batchesInFlight``):
/// the later one waits, after its rows and before the batch check, for the one before it to end;
/// a deadlock with a shipper that locks the head before it inserts is a refusal, not an error.
/// Statement by statement, on connections the tests hold, so that the order is the test's.
@Suite(.needsPostgres) struct BatchOrderTests {
  /// A log of 30 entries whose first 10 are on the server, and entries 11…20 and 21…30 as batches.
  struct Setup {
    let device: TestLog
    let second: Shipping.Batch
    let third: Shipping.Batch
    let hex: String
  }

  func setUp(_ client: PostgresClient) async throws -> Setup {
    let device = try TestLog()
    try device.append(10)
    _ = try await LogShipper(client: client, options: .init(batchSize: 10)).ship(directory: device.url)
    try device.append(20)
    return try device.withLog { log in
      let id = try #require(try log.logID())
      let hex = id.map { String(format: "%02x", $0) }.joined()
      let hashes = try log.records(in: 10...20).map(\.hash)
      func batch(_ range: ClosedRange<UInt64>, after previous: [UInt8]) throws -> Shipping.Batch {
        try Shipping.batch(log, range, previous: previous, logID: id, hex: hex, keys: Shipping.Keys(logID: id))
      }
      return Setup(
        device: device, second: try batch(11...20, after: hashes[0]), third: try batch(21...30, after: hashes[10]),
        hex: hex)
    }
  }

  /// Waits until the server shows `count` ungranted locks of `type` (`pg_locks.locktype`).
  func waitForWaiters(_ client: PostgresClient, type: String, count: Int) async throws {
    let deadline = ContinuousClock.now + .seconds(20)
    while try await value(
      client, "SELECT count(*) FROM pg_locks WHERE locktype = \(type) AND NOT granted", as: Int64.self) < count
    {
      guard ContinuousClock.now < deadline else { throw ServerError("no \(count) waiting \(type) lock(s) in 20 s") }
      try await Task.sleep(for: .milliseconds(10))
    }
  }

  /// Inserts batch 11…20 in a transaction the test holds open, sends 21…30 on another connection,
  /// waits until that statement waits (its rows in, nothing of it visible, the head still at 10),
  /// ends the open transaction with `end` (`COMMIT` or `ROLLBACK`) and returns what became of 21…30.
  func sendThirdWhileSecondIsOpen(_ client: PostgresClient, _ setup: Setup, end: PostgresQuery) async throws
    -> Shipping.Outcome
  {
    try await client.withConnection { holder in
      try await holder.query("BEGIN", logger: quietLogger)
      #expect(try await Shipping.insert(holder, setup.second, hex: setup.hex).isStored)
      let third = Task { try await Shipping.insert(client, setup.third, hex: setup.hex) }
      try await waitForWaiters(client, type: "advisory", count: 1)
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 10)
      try await holder.query(end, logger: quietLogger)
      return try await third.value
    }
  }

  /// Batch 21…30 reaches the server while 11…20 is still on it (here: in a transaction the test
  /// holds, which has inserted it but not committed). It stores its rows, then waits for 11…20 to
  /// commit, and its batch check then sees the head at 20. Without that wait its check would see
  /// the head at 10 and refuse it.
  @Test func aBatchWaitsForTheBatchBeforeItToCommit() async throws {
    try await withDatabase { client, _ in
      let setup = try await setUp(client)
      defer { setup.device.remove() }
      #expect(try await sendThirdWhileSecondIsOpen(client, setup, end: "COMMIT").isStored)
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 30)
      let deviceHashes = try setup.device.withLog { log in try log.records(in: 1...30).map(\.hash) }
      #expect(try await serverHashes(client) == deviceHashes)
    }
  }

  /// The batch before it rolled back: the waiting batch's check sees the head where it was, and
  /// refuses it (a gap); nothing of either is stored.
  @Test func aBatchAfterOneThatRolledBackIsRefused() async throws {
    try await withDatabase { client, _ in
      let setup = try await setUp(client)
      defer { setup.device.remove() }
      let outcome = try await sendThirdWhileSecondIsOpen(client, setup, end: "ROLLBACK")
      #expect(outcome.state == "CH001", "\(outcome)")
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 10)
      #expect(try await value(client, "SELECT count(*) FROM chronicle.entries", as: Int64.self) == 10)
    }
  }

  /// A shipper of an older version locks the head first and then inserts; a batch statement
  /// inserts first and locks the head in its check. When both carry entry 11 they deadlock, and
  /// PostgreSQL aborts the batch statement (it waited longest): a refusal (40P01), after which a
  /// shipper goes back to the locked path, not an error that stops it.
  @Test func aDeadlockWithAShipperThatLocksTheHeadFirstIsARefusal() async throws {
    try await withDatabase { client, _ in
      let setup = try await setUp(client)
      defer { setup.device.remove() }
      try await client.withConnection { holder in
        // The other side waits long before it looks for a deadlock: the batch statement finds it.
        try await holder.query("SET deadlock_timeout = '30s'", logger: quietLogger)
        try await holder.query("BEGIN", logger: quietLogger)
        _ = try await holder.query("SELECT head_seq FROM chronicle.logs FOR UPDATE", logger: quietLogger)
        let batch = Task { try await Shipping.insert(client, setup.second, hex: setup.hex) }
        try await waitForWaiters(client, type: "transactionid", count: 1)
        let started = ContinuousClock.now
        // Blocks on the batch statement (which holds 11…20) until PostgreSQL aborts that statement.
        #expect(try await Shipping.insert(holder, setup.second, hex: setup.hex).isStored)
        let outcome = try await batch.value
        #expect(outcome.state == "40P01", "\(outcome)")
        #expect(ContinuousClock.now - started < .seconds(20))
        try await holder.query("COMMIT", logger: quietLogger)
      }
      #expect(try await value(client, "SELECT head_seq FROM chronicle.logs", as: Int64.self) == 20)
      let deviceHashes = try setup.device.withLog { log in try log.records(in: 1...20).map(\.hash) }
      #expect(try await serverHashes(client) == deviceHashes)
    }
  }

  /// Shipping with two batches in flight and with one stores the same entries with the same hashes.
  @Test(arguments: [1, 2, 4]) func everyNumberOfBatchesInFlightStoresTheLogOnce(_ inFlight: Int) async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(500)
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client, options: .init(batchSize: 30, batchesInFlight: inFlight))
      let heads = Mutex<[UInt64]>([])
      let report = try await shipper.ship(directory: device.url) { report in
        heads.withLock { $0.append(report.serverHead) }
      }
      #expect(report.entriesShipped == 500)
      #expect(report.batches == 17)
      // Batches commit, and are reported, in order.
      #expect(heads.withLock { $0 } == Array(stride(from: 30, to: 500, by: 30)).map(UInt64.init) + [500])
      let deviceHashes = try device.withLog { log in try log.records(in: 1...500).map(\.hash) }
      #expect(try await serverHashes(client) == deviceHashes)
    }
  }

  /// A pool of one connection: the batches in flight take turns for it, and nothing waits on a
  /// connection the shipper holds itself.
  @Test func aPoolOfOneConnectionShipsWithBatchesInFlight() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(100)
    try await withDatabase { _, database in
      var configuration = database.configuration
      configuration.options.maximumConnections = 1
      try await withClient(configuration) { client in
        let shipper = LogShipper(client: client, options: .init(batchSize: 10, batchesInFlight: 2))
        let report = try await shipper.ship(directory: device.url)
        #expect(report.entriesShipped == 100)
        #expect(report.batches == 10)
        let deviceHashes = try device.withLog { log in try log.records(in: 1...100).map(\.hash) }
        #expect(try await serverHashes(client) == deviceHashes)
      }
    }
  }
}

extension Shipping.Outcome {
  var isStored: Bool {
    if case .stored = self { return true }
    return false
  }

  /// The SQLSTATE of a refusal, `nil` when stored.
  var state: String? {
    if case .refused(let state, _) = self { return state }
    return nil
  }
}
