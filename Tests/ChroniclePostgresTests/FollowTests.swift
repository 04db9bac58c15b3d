import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Synchronization
import Testing
import ChronicleTestTools

// MARK: - Following a log while the server crashes

/// The events a following shipper reported, as the test reads them.
final class EventLog: Sendable {
  private let events = Mutex<[String]>([])

  func record(_ event: ShipEvent) {
    let line: String
    switch event {
    case .shipped(let report): line = "shipped \(report.entriesShipped) head \(report.serverHead)"
    case .retrying(let error, let attempt, let delay):
      line = "retrying \(attempt) after \(delay): \(LogShipper.describe(error))"
    case .recovered(let failures): line = "recovered \(failures)"
    }
    events.withLock { $0.append(line) }
  }

  func note(_ line: String) { events.withLock { $0.append(line) } }

  var lines: [String] { events.withLock { $0 } }
}

@Suite(.needsPostgres) struct FollowTests {
  /// Two writer processes append (a backlog first, then a slow stream) while a shipper follows the
  /// log; the server is stopped with `pg_ctl stop -m immediate` twice while the shipper ships, and
  /// restarted. The shipper reports the failures, retries, recovers and catches up: every entry is
  /// on the server exactly once, with the device's hashes, and the server's tree root is the log's.
  @Test(.timeLimit(.minutes(3))) func aFollowingShipperSurvivesServerCrashes() async throws {
    // A cluster of this test alone: stopping the shared one would break the other tests.
    let server = PostgresServer()
    let database = try await server.makeDatabase()
    let device = try TestLog()
    defer { device.remove() }
    let backlog = 3_000
    let streamed = 1_500

    let first = try ChildProcess.run(
      "chronicle-log-probe", ["append", device.url.path, "\(backlog)", "normal"], timeout: 120)
    #expect(first.status == 0, "\(first.stderr)")

    var configuration = database.configuration
    configuration.options.connectTimeout = .seconds(2)
    try await withClient(configuration) { client in
      try await PostgresSchema.migrate(client)
      let events = EventLog()
      let shipper = LogShipper(
        client: client,
        options: .init(
          batchSize: 10, pollInterval: .milliseconds(5), firstRetryDelay: .milliseconds(50),
          maxRetryDelay: .milliseconds(400), stepTimeout: .seconds(1)))
      let following = Task {
        try await shipper.follow(directory: device.url) { events.record($0) }
        events.note("stopped")
      }
      let writer = try ChildProcess(
        "chronicle-log-probe", ["append", device.url.path, "\(streamed)", "normal", "2000"], errors: .capture)

      // Crash the server twice, each time once the shipper has stored more than before.
      var stored: Int64 = 0
      for round in 1...2 {
        let target = stored + 300
        stored = try await waitForStored(database, atLeast: target, timeout: 60)
        #expect(stored >= target, "round \(round): the shipper stored only \(stored) entries")
        // Down for longer than a step's deadline: the shipper cannot miss the outage.
        try await server.crash()
        try await Task.sleep(for: .seconds(2))
        try await server.restart()
      }

      #expect(writer.wait(timeout: 120) == 0, "\(writer.errors?.text ?? "")")
      let total = Int64(backlog + streamed)
      let reached = try await waitForStored(database, atLeast: total, timeout: 90)
      following.cancel()
      // Cancelled, the follower returns normally.
      for _ in 0..<200 where !events.lines.contains("stopped") { try await Task.sleep(for: .milliseconds(50)) }
      #expect(events.lines.contains("stopped"), "the follower did not stop: \(events.lines.suffix(20))")
      #expect(reached == total, "events: \(events.lines.suffix(20))")
      guard reached == total else { return }

      let lines = events.lines
      #expect(lines.contains { $0.hasPrefix("retrying 1 ") }, "the shipper reported no failure: \(lines)")
      #expect(lines.contains { $0.hasPrefix("recovered ") }, "the shipper reported no recovery: \(lines)")

      let log = try ActionLog(directory: device.url, access: .readOnly)
      defer { try? log.close() }
      let id = try #require(try log.logID())
      let seqs = try await column(
        client, "SELECT seq FROM chronicle.entries WHERE log_id = \(bytea(id)) ORDER BY seq", as: Int64.self)
      #expect(seqs == Array(1...total))
      let hashes = try await column(
        client, "SELECT hash FROM chronicle.entries WHERE log_id = \(bytea(id)) ORDER BY seq", as: ByteBuffer.self)
      #expect(hashes.map { Array($0.readableBytesView) } == (try log.records(in: 1...UInt64(total)).map(\.hash)))
      let root = try await value(
        client, "SELECT chronicle.tree_root(\(bytea(id)), \(total))", as: ByteBuffer.self)
      #expect(Array(root.readableBytesView) == (try log.treeRoot(size: UInt64(total))))
      let head = try await value(
        client, "SELECT head_seq FROM chronicle.logs WHERE log_id = \(bytea(id))", as: Int64.self)
      #expect(head == total)
    }
    await server.shutDown()
  }

  /// A follower with nothing to ship reports an outage when it starts, not when the log next
  /// grows: the server is stopped while the log is idle, and a `.retrying` event comes within the
  /// idle check and one step's deadline; once the server is back, `.recovered`.
  @Test(.timeLimit(.minutes(2))) func anIdleFollowerReportsAnOutageWhenItStarts() async throws {
    let server = PostgresServer()
    let database = try await server.makeDatabase()
    let device = try TestLog()
    defer { device.remove() }
    try device.append(20)
    var configuration = database.configuration
    configuration.options.connectTimeout = .seconds(2)
    try await withClient(configuration) { client in
      try await PostgresSchema.migrate(client)
      let events = EventLog()
      let shipper = LogShipper(
        client: client,
        options: .init(
          pollInterval: .milliseconds(20), firstRetryDelay: .milliseconds(100), maxRetryDelay: .milliseconds(500),
          stepTimeout: .seconds(2), idleCheckInterval: .seconds(1)))
      let following = Task { try await shipper.follow(directory: device.url) { events.record($0) } }
      defer { following.cancel() }
      _ = try await waitForStored(database, atLeast: 20, timeout: 30)
      try await Task.sleep(for: .milliseconds(300))
      #expect(events.lines == ["shipped 20 head 20"])

      try await server.crash()
      let stopped = ContinuousClock.now
      while !events.lines.contains(where: { $0.hasPrefix("retrying 1 ") }), ContinuousClock.now - stopped < .seconds(15) {
        try await Task.sleep(for: .milliseconds(50))
      }
      let reported = ContinuousClock.now - stopped
      // At most one idle interval, one step's deadline and the polling between them.
      #expect(reported < .seconds(5), "the outage was reported \(reported) after it started: \(events.lines)")
      try await server.restart()
      let restarted = ContinuousClock.now
      while !events.lines.contains(where: { $0.hasPrefix("recovered ") }), ContinuousClock.now - restarted < .seconds(30) {
        try await Task.sleep(for: .milliseconds(50))
      }
      #expect(events.lines.contains { $0.hasPrefix("recovered ") }, "\(events.lines)")
      // The log did not change: nothing was shipped twice.
      #expect(events.lines.filter { $0.hasPrefix("shipped") } == ["shipped 20 head 20"])
    }
    await server.shutDown()
  }

  /// A follower stops, throwing, on a failure waiting cannot cure: here a fork.
  @Test func aFollowingShipperStopsOnAFork() async throws {
    let device = try TestLog()
    defer { device.remove() }
    try device.append(10)
    let twin = try device.copy(named: "twin")
    try device.append(5)
    try device.append(5, at: twin, TestLog.withdrawal)
    try await withDatabase { client, _ in
      let shipper = LogShipper(client: client, options: .init(pollInterval: .milliseconds(5)))
      _ = try await shipper.ship(directory: device.url)
      let events = EventLog()
      let error = await #expect(throws: ShipError.self) {
        try await shipper.follow(directory: twin) { events.record($0) }
      }
      guard case .fork(_, let seq) = error else {
        Issue.record("expected a fork, got \(String(describing: error))")
        return
      }
      #expect(seq == 11)
      #expect(events.lines.isEmpty)
    }
  }

  /// How many entries the server holds, polled until at least `count` or `timeout` seconds;
  /// errors while the server restarts count as none yet.
  /// Each look is a connection of its own, so the test's view does not depend on the follower's pool.
  func waitForStored(
    _ database: PostgresServer.Database, atLeast count: Int64, timeout: TimeInterval
  ) async throws -> Int64 {
    let deadline = Date().addingTimeInterval(timeout)
    var stored: Int64 = 0
    while Date() < deadline {
      if let now = try? await storedCount(database) {
        stored = now
        if now >= count { return now }
      }
      try await Task.sleep(for: .milliseconds(50))
    }
    return stored
  }

  /// The entries the server holds, through a new connection.
  func storedCount(_ database: PostgresServer.Database) async throws -> Int64 {
    let connection = try await PostgresConnection.connect(
      configuration: .init(
        host: "127.0.0.1", port: database.port, username: "postgres", password: PostgresServer.password,
        database: database.name, tls: .disable),
      id: 1, logger: quietLogger)
    defer { Task { try? await connection.close() } }
    for try await count in try await connection.query("SELECT count(*) FROM chronicle.entries", logger: quietLogger)
      .decode(Int64.self)
    {
      return count
    }
    return 0
  }
}
