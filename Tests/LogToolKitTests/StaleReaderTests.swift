import ChronicleLog
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

/// Readers that die inside a read transaction, with real processes: a probe killed with
/// SIGKILL, a probe killed by SIGPIPE, and `logtool list` whose reader goes away.
@Suite(.serialized) struct StaleReaderTests {
  /// How `data.mdb` may grow at most while a writer appends `entries` entries and readers die:
  /// 512 bytes per entry plus 16 MiB. A stale reader left in place costs at least one 4 KiB
  /// page per commit, far beyond it; the writer clears stale readers within
  /// `ReaderCheckPolicy.commits` commits, so each dead reader costs well under a MiB.
  static func sizeBound(entries: Int) -> Int { entries * 512 + 16 << 20 }

  @Test func deadReadersCostAWriterBoundedGrowth() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 3_000, snapshotEvery: 1_000_000)

    let writer = try ChildProcess("chronicle-log-probe", ["append-for", log.path, "6000"])
    #expect(writer.waitFor(timeout: 60) { $0.contains { $0.text.hasPrefix("at ") } })

    // SIGKILL inside a read transaction.
    let holder = try ChildProcess("chronicle-log-probe", ["read-hold", log.path])
    #expect(holder.waitFor(timeout: 60) { $0.contains { $0.text.hasPrefix("inside") } })
    kill(holder.process.processIdentifier, SIGKILL)
    holder.wait()

    // SIGPIPE inside a read transaction.
    let piped = try runClosingPipe("chronicle-log-probe", ["read-pipe", log.path])
    #expect(piped.reason == .uncaughtSignal && piped.status == SIGPIPE, "read-pipe died of SIGPIPE: \(piped)")

    // `logtool list LOG | head -1`: logtool survives and leaves no slot behind.
    let listed = try runClosingPipe("logtool", ["list", log.path])
    #expect(listed.reason == .exit && listed.status == 0, "logtool list exits 0 on a closed pipe: \(listed)")
    #expect(listed.stderr.isEmpty, "stderr: \(listed.stderr)")

    #expect(writer.wait(timeout: 120) == 0)
    let done = try #require(writer.output.lines.last { $0.text.hasPrefix("done ") }?.text)
    let fields = done.split(separator: " ")
    let appended = try #require(Int(fields[1]))
    let cleared = try #require(Int(fields[3]))
    #expect(cleared == 2, "the writer cleared the probes' two slots (logtool left none): \(done)")

    let size = try #require(try FileManager.default.attributesOfItem(atPath: log.path + "/data.mdb")[.size] as? Int)
    let bound = Self.sizeBound(entries: 3_000 + appended)
    #expect(size <= bound, "data.mdb is \(size) bytes after \(appended) appends, above the bound \(bound)")

    let reader = try ActionLog(directory: log, access: .readOnly)
    defer { try? reader.close() }
    #expect(try reader.storageStatus().staleReaders.isEmpty)
  }

  /// `info` and `storageStatus()` show a stale reader with its pid until a writer clears it
  /// (at its open here).
  @Test func infoShowsStaleReadersUntilAWriterClearsThem() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 50, snapshotEvery: 1_000_000)
    // LMDB resets the reader table when a process opens the files that no other process has
    // open: keep them open here, as a running app would.
    let keeper = try ActionLog(directory: log, access: .readOnly)
    defer { try? keeper.close() }

    let holder = try ChildProcess("chronicle-log-probe", ["read-hold", log.path])
    #expect(holder.waitFor(timeout: 60) { $0.contains { $0.text.hasPrefix("inside") } })
    let pid = holder.process.processIdentifier
    let live = try Tool.run(["info", log.path])
    #expect(live.stdout.contains("pid \(pid)  live   reading txn"), "\(live.stdout)")
    kill(pid, SIGKILL)
    holder.wait()

    #expect(try keeper.storageStatus().staleReaders.map(\.pid) == [pid])
    let stale = try Tool.run(["info", log.path, "--json"])
    #expect(stale.status == 0)
    let json = try #require(try JSONSerialization.jsonObject(with: Data(stale.stdout.utf8)) as? [String: Any])
    let readers = try #require(json["readers"] as? [String: Any])
    #expect(readers["stale"] as? Int == 1)
    let slots = try #require(readers["slots"] as? [[String: Any]])
    #expect(slots.contains { $0["pid"] as? Int == Int(pid) && $0["stale"] as? Bool == true })
    let text = try Tool.run(["stats", log.path])
    #expect(text.stdout.contains("1 live, 1 stale") || text.stdout.contains("0 live, 1 stale"), "\(text.stdout)")
    #expect(text.stdout.contains("pid \(pid)  stale  reading txn"), "\(text.stdout)")

    let writer = try ChildProcess("chronicle-log-probe", ["append-for", log.path, "50"])
    #expect(writer.wait() == 0)
    #expect(writer.output.lines.last?.text.hasSuffix(" cleared 1") == true, "\(writer.output.lines.last?.text ?? "")")
    #expect(try keeper.storageStatus().staleReaders.isEmpty)
    let after = try Tool.run(["info", log.path])
    #expect(after.stdout.contains("readers     none in a transaction"), "\(after.stdout)")
  }

  /// How a child run by ``runClosingPipe(_:_:)`` ended.
  struct PipeRun: CustomStringConvertible {
    var reason: Process.TerminationReason
    var status: Int32
    var firstLine: String
    var stderr: String
    var description: String { "reason \(reason.rawValue) status \(status), first line '\(firstLine)', stderr '\(stderr)'" }
  }

  /// Runs `tool` with its standard output on a pipe, reads the first line, closes the pipe
  /// (as `| head -1` does) and waits for the child to end.
  func runClosingPipe(_ tool: String, _ arguments: [String]) throws -> PipeRun {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let err = scratch.child("stderr")
    try Data().write(to: err)
    let process = Process()
    let pipe = Pipe()
    process.executableURL = Helpers.url(tool)
    process.arguments = arguments
    process.standardOutput = pipe
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    try pipe.fileHandleForWriting.close()
    var line: [UInt8] = []
    while !line.contains(UInt8(ascii: "\n")) {
      guard let data = try pipe.fileHandleForReading.read(upToCount: 1), !data.isEmpty else { break }
      line.append(contentsOf: data)
    }
    try pipe.fileHandleForReading.close()
    let deadline = Date().addingTimeInterval(120)
    while process.isRunning, Date() < deadline { usleep(2_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return PipeRun(
      reason: process.terminationReason, status: process.terminationStatus,
      firstLine: String(decoding: line, as: UTF8.self), stderr: try String(contentsOf: err, encoding: .utf8))
  }
}
