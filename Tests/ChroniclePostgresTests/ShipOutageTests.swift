import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

/// `logtool ship` through a server outage: it never waits for ever. Stopped 2 s into a ship and
/// started again 20 s later, the server gets the rest of the log, or the ship ends with exit 2 and
/// one line naming the server, within a minute of the restart. Each round takes over a minute:
/// `CHRONICLE_HEAVY=1` runs ten (docs/reliability.md, *Running the suite*).
@Suite(.needsPostgres) struct ShipOutageTests {
  static let rounds = ProcessInfo.processInfo.environment["CHRONICLE_HEAVY"] == "1" ? 10 : 0

  @Test(.enabled(if: rounds > 0, "CHRONICLE_HEAVY=1 runs it"), .timeLimit(.minutes(20)))
  func aShipThroughAServerRestartEnds() async throws {
    for _ in 0..<Self.rounds { try await shipThroughARestart() }
  }

  func shipThroughARestart() async throws {
    // A cluster of this test alone: stopping the shared one would break the other tests.
    let server = PostgresServer()
    let database = try await server.makeDatabase()
    let device = try TestLog()
    defer { device.remove() }
    try device.append(300_000)
    let url = toolURL(database)
    let first = try logtool(["ship", device.url.path, "--to", url, "--migrate", "--batch-size", "4000"])
    #expect(first.status == 0, "\(first.stderr)")
    try device.append(300_000)

    let ship = try ChildProcess("logtool", ["ship", device.url.path, "--to", url, "--batch-size", "100"], errors: .capture)
    try await Task.sleep(for: .seconds(2))
    #expect(ship.isRunning, "the ship was still running when the server stopped")
    try await server.crash()
    try await Task.sleep(for: .seconds(20))
    try await server.restart()
    let restarted = Date()
    let status = ship.wait(timeout: 90)
    let waited = Date().timeIntervalSince(restarted)
    #expect(!ship.timedOut && waited < 60, "the ship ended \(waited) s after the restart")
    #expect(status == 0 || status == 2, "\(ship.errors?.text ?? "")")
    if status == 2 {
      let lines = (ship.errors?.texts ?? []).filter { !$0.hasPrefix("{") && !$0.hasPrefix("ship") }
      #expect(lines.count == 1 && lines[0].contains("127.0.0.1"), "\(lines)")
    }
  }
}
