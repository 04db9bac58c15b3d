import ChronicleLog
import ChronicleTestTools
import Foundation
import Testing

// MARK: - chronicle-sync-demo

/// The shared-stream demo, run as a person runs it: it exits 0 and narrates the four steps (the
/// deposit seen live, bob's offline withdrawal, its refusal, the same history on both copies).
@Suite(.needsPostgres) struct SyncDemoTests {
  /// The lines every run prints, whatever the server.
  func expectNarration(_ run: ChildResult) {
    #expect(run.status == 0, "\(run.stderr)\n\(run.stdout)")
    #expect(run.stderr.isEmpty, "\(run.stderr)")
    let lines = run.stdout.split(separator: "\n").map(String.init)
    for expected in [
      "ann deposits 100.00 into petty cash",
      "bob, offline, withdraws 50.00 for a taxi: fine on the 100.00 his device knows of",
      "bob's device shows petty cash 50.00; pending: withdraw 50.00 from petty cash (outbox #1)",
      "bob's device pulls ann's withdrawal and rebases his on it: petty cash would be 30.00 - 50.00 = -20.00",
      "bob is told (onRejection, on the main actor): \"withdraw 50.00 from petty cash\" for a taxi was refused: "
        + "no account may go below zero",
      "bob's device shows petty cash 30.00; pending: none",
      "a checkpoint of the stream (3 entries) signed on ann's copy verifies on bob's copy",
    ] {
      #expect(lines.contains(expected), "missing: \(expected)\n\(run.stdout)")
    }
    #expect(lines.contains { $0.hasPrefix("bob's device shows it ") && $0.hasSuffix(" ms later: petty cash 100.00") })
    #expect(lines.contains("the validator refuses it, and the stream records the refusal as entry 3"))
    // Both copies end at entry 3 with the same head and root.
    let heads = lines.filter { $0.hasPrefix("ann: head 3 ") || $0.hasPrefix("bob: head 3 ") }
    #expect(heads.count == 2)
    #expect(Set(heads.map { $0.dropFirst(5) }).count == 1, "\(heads)")
  }

  /// With its own cluster and `--keep`: the copies stay (and verify), the cluster does not.
  @Test func theDemoRunsOnAPrivateClusterAndKeepsTheCopies() throws {
    let run = try ChildProcess.run("chronicle-sync-demo", ["--keep"], timeout: 240)
    expectNarration(run)
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.contains { $0.hasPrefix("PostgreSQL: a private cluster on 127.0.0.1:") })
    #expect(lines.contains("  2  withdraw            ann  ann"))
    #expect(lines.contains("  3  chronicle.rejected  bob  bob"))
    let copies = ["ann", "bob"].compactMap { name in
      lines.first { $0.hasPrefix("\(name)'s copy: ") }.map { String($0.dropFirst("\(name)'s copy: ".count)) }
    }
    try #require(copies.count == 2, "\(run.stdout)")
    defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: copies[0]).deletingLastPathComponent()) }
    for copy in copies {
      let log = try ActionLog(directory: URL(fileURLWithPath: copy), access: .readOnly)
      defer { try? log.close() }
      #expect(try log.head().seq == 3)
      #expect(try log.verify().isValid)
    }
    #expect(lines.contains { $0.contains("logtool sync-status \(copies[1])") })
    #expect(lines.contains { $0.contains("logtool serve \(copies[0])") })
  }

  /// With `--server`: the suite's cluster, as its superuser; the temporary directory is removed.
  @Test func theDemoRunsOnAGivenServer() async throws {
    let database = try await PostgresServer.shared.makeDatabase()
    let url = "postgres://postgres:\(PostgresServer.password)@127.0.0.1:\(database.port)/\(database.name)"
    let run = try ChildProcess.run("chronicle-sync-demo", ["--server", url], timeout: 240)
    expectNarration(run)
    let lines = run.stdout.split(separator: "\n").map(String.init)
    #expect(lines.contains("  3  chronicle.rejected  bob  postgres"))
    let copy = try #require(lines.first { $0.hasPrefix("ann's copy: ") }?.dropFirst("ann's copy: ".count))
    #expect(!FileManager.default.fileExists(atPath: URL(fileURLWithPath: String(copy)).deletingLastPathComponent().path))
  }

  /// A server it cannot reach: one line on standard error, exit 1.
  @Test func anUnreachableServerIsOneLineAndExit1() throws {
    let run = try ChildProcess.run("chronicle-sync-demo", ["--server", "postgres://nobody:secret@127.0.0.1:1/none"], timeout: 120)
    #expect(run.status == 1)
    #expect(run.errorLines.count == 1, "\(run.stderr)")
    #expect(run.stderr.hasPrefix("chronicle-sync-demo: "), "\(run.stderr)")
  }
}
