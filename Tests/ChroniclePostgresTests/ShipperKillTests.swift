import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Testing
import ChronicleTestTools

// MARK: - Killing the shipper

@Suite(.needsPostgres) struct ShipperKillTests {
  /// A shipper in another process is killed with SIGKILL at random moments while it ships, 20
  /// times, the log growing between kills; a last ship then completes. Every entry is on the server
  /// exactly once, and the server's chain and tree are the device's.
  @Test func killedShippersResumeAndEveryEntryIsStoredOnce() async throws {
    let device = try TestLog()
    defer { device.remove() }
    let seed = UInt64(Date().timeIntervalSince1970 * 1_000)
    var random = SplitMix64(seed: seed)
    try await withDatabase { client, database in
      var total = 0
      var midShip = 0
      for _ in 0..<20 {
        try device.append(150)
        total += 150
        let child = try ChildProcess(
          "chronicle-pg-probe",
          ["ship", device.url.path, "\(database.port)", database.name, PostgresServer.password, "7"],
          errors: .capture)
        guard child.readLine(timeout: 60) == "ready" else {
          child.kill()
          Issue.record("the shipper did not start: \(child.errors?.text ?? "")")
          return
        }
        try await Task.sleep(for: .milliseconds(Int(random.next() % 60)))
        let finished = child.output.texts.contains { $0.hasPrefix("shipped") }
        child.kill()
        if !finished { midShip += 1 }
        #expect(child.errors?.text.isEmpty == true, "seed \(seed): \(child.errors?.text ?? "")")
      }
      // Most kills must land inside a ship, or the test shows nothing.
      #expect(midShip >= 5, "seed \(seed): only \(midShip) of 20 kills interrupted a ship")

      let report = try await LogShipper(client: client).ship(directory: device.url)
      #expect(report.serverHead == UInt64(total))
      let seqs = try await column(client, "SELECT seq FROM chronicle.entries ORDER BY seq", as: Int64.self)
      #expect(seqs == Array(1...Int64(total)), "seed \(seed)")
      let log = try ActionLog(directory: device.url, access: .readOnly)
      defer { try? log.close() }
      let id = try #require(try log.logID())
      let hashes = try await column(
        client, "SELECT hash FROM chronicle.entries WHERE log_id = \(bytea(id)) ORDER BY seq", as: ByteBuffer.self)
      #expect(hashes.map { Array($0.readableBytesView) } == (try log.records(in: 1...UInt64(total)).map(\.hash)))
      let root = try await value(
        client, "SELECT chronicle.tree_root(\(bytea(id)), \(Int64(total)))", as: ByteBuffer.self)
      #expect(Array(root.readableBytesView) == (try log.treeRoot(size: UInt64(total))))
    }
  }
}
