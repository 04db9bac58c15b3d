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

/// `logtool` reads while another process writes: `tail --follow` shows every new entry
/// within a second, `verify` passes, and SIGINT/SIGTERM end `tail --follow` with exit 0.
@Suite(.serialized) struct ConcurrentWriterTests {
  @Test(arguments: [SIGINT, SIGTERM])
  func tailFollowsAWriterInAnotherProcess(_ stopSignal: Int32) throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 5, snapshotEvery: 1000)

    let tail = try ChildProcess("logtool", ["tail", log.path, "--follow", "--json", "-n", "2"])
    #expect(tail.waitFor(timeout: 10) { $0.count >= 2 }, "tail printed the last two entries")
    let writer = try ChildProcess("chronicle-log-probe", ["append", log.path, "150", "normal", "4000"])
    var verifications = 0
    while writer.process.isRunning {
      let result = try Tool.run(["verify", log.path])
      #expect(result.status == 0, "verify while the writer appends: \(result.stdout) \(result.stderr)")
      verifications += 1
    }
    #expect(writer.wait() == 0)
    #expect(verifications >= 1)
    #expect(try Tool.run(["verify", log.path]).status == 0)

    let acknowledged = writer.output.lines.compactMap { line in UInt64(line.text).map { ($0, line.time) } }
    #expect(acknowledged.count == 150)
    #expect(tail.waitFor(timeout: 2) { $0.count >= 152 }, "tail printed every entry")
    kill(tail.process.processIdentifier, stopSignal)
    #expect(tail.wait(timeout: 5) == 0, "tail --follow exits 0 on signal \(stopSignal)")

    var shown: [UInt64: Date] = [:]
    for line in tail.output.lines {
      let object = try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any]
      if let seq = object?["seq"] as? Int { shown[UInt64(seq)] = line.time }
    }
    #expect(Array(shown.keys).sorted() == Array(4...155), "the last two old entries, then every new one once")
    for (seq, acknowledgedAt) in acknowledged {
      guard let shownAt = shown[seq] else { continue }
      #expect(shownAt.timeIntervalSince(acknowledgedAt) < 1, "entry \(seq) shown within a second")
    }
  }

  @Test func tailFollowPrintsATableToo() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 3, snapshotEvery: 1000)
    let tail = try ChildProcess("logtool", ["tail", log.path, "-f"])
    #expect(tail.waitFor(timeout: 10) { $0.count >= 4 }, "a header and three rows")
    let writer = try ChildProcess("chronicle-log-probe", ["append", log.path, "5", "normal", "1000"])
    #expect(writer.wait() == 0)
    #expect(tail.waitFor(timeout: 2) { $0.count >= 9 })
    kill(tail.process.processIdentifier, SIGINT)
    #expect(tail.wait(timeout: 5) == 0)
    let lines = tail.output.lines.map(\.text)
    #expect(lines.first?.hasPrefix("   SEQ  TIME") == true, "header: \(lines.first ?? "")")
    #expect(lines.last?.contains("  n  ") == true, "the probe's entries have type n: \(lines.last ?? "")")
  }
}
