import Chronicle
import DemoLedger
import Foundation
import ChronicleTestTools
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `chronicle-demo`, run as a user runs it: its exit codes, its messages and where its log goes.
@Suite struct DemoTests {
  /// Runs the demo with `arguments`, its temporary directory set to `temporary`.
  private func demo(_ arguments: [String], temporary: URL) throws -> ChildResult {
    try Tool.run(arguments, tool: "chronicle-demo", environment: ["TMPDIR": temporary.path])
  }

  /// The demo's directories left in `directory`.
  private func leftovers(in directory: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("chronicle-demo-") }
  }

  @Test func aLogAnotherWriterHoldsIsOneLineAndExitTwo() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("ledger")
    let holder = try Store(initialState: Ledger.State(), reducer: Ledger(), log: .directory(log))
    defer { try? holder.close() }
    let result = try demo(["--dir", log.path], temporary: scratch.url)
    #expect(result.status == 2)
    #expect(
      result.errorLines == [
        "chronicle-demo: the log at \(log.path) is locked by another writer; stop it, or pass --dir with another path"
      ])
  }

  @Test func badUsageIsExitTwo() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let result = try demo(["--no-such-flag"], temporary: scratch.url)
    #expect(result.status == 2)
    #expect(result.stderr.contains("--no-such-flag"))
    #expect(try leftovers(in: scratch.url).isEmpty)
  }

  @Test func theTemporaryLogIsRemovedUnlessKept() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let plain = try demo([], temporary: scratch.url)
    #expect(plain.status == 0, "\(plain.stderr)")
    #expect(plain.stdout.contains("log at \(scratch.path)/chronicle-demo-"))
    #expect(plain.stdout.contains("(temporary: removed at the end unless --keep)"))
    #expect(try leftovers(in: scratch.url).isEmpty)

    let kept = try demo(["--keep"], temporary: scratch.url)
    #expect(kept.status == 0, "\(kept.stderr)")
    let left = try leftovers(in: scratch.url)
    #expect(left.count == 1)
    for name in left {
      #expect(FileManager.default.fileExists(atPath: scratch.child(name).appendingPathComponent("data.mdb").path))
      #expect(kept.stdout.contains("Inspect it yourself: swift run --traits LogTool logtool info \(scratch.child(name).path)"))
    }
  }

  @Test func aChosenDirectoryIsKeptAndNumbersAreGrouped() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("ledger")
    let result = try demo(["--dir", log.path], temporary: scratch.url)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(FileManager.default.fileExists(atPath: log.appendingPathComponent("data.mdb").path))
    // 100.00 + 25.00 in the ledger: one number format, with thousands separators.
    #expect(result.stdout.contains("(12,500 cents)"))
    let replayed = #"replayed [\d,]+ entries in \d+\.\d+ s \([\d,]+ entries/s\)"#
    #expect(result.stdout.range(of: replayed, options: .regularExpression) != nil)
    // The recovery lines count thousands of entries sent by the killed child.
    let recovery = result.stdout.split(separator: "\n").filter {
      $0.hasPrefix("reopened:") || $0.hasPrefix("last entry") || $0.hasPrefix("money conserved")
    }
    #expect(recovery.count == 3)
    #expect(recovery.filter { $0.range(of: #"\d{4}"#, options: .regularExpression) != nil } == [])
  }
}
