import ChronicleLog
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `logtool compact` killed with SIGKILL at random moments never leaves a broken log:
/// it opens and verifies, starting at the old first entry or right after the cut, and
/// running the same command again finishes the job.
@Suite(.serialized) struct CompactionKillTests {
  static let entries = 20_000
  static let cut: UInt64 = 18_000

  @Test func killedAtRandomMomentsTheLogStaysValid() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let original = scratch.child("original")
    try makeLog(at: original, count: Self.entries, snapshotEvery: 2_000, payloadBytes: 200)

    /// The arguments of a compaction of `log`, archiving to `archive` or discarding.
    func arguments(_ log: URL, archive: URL?) -> [String] {
      ["compact", log.path, "--before", "18500"] + (archive.map { ["--archive", $0.path] } ?? ["--discard"])
    }
    // How long uninterrupted compactions take, to spread the kills over them. With an
    // archive, the cut and the rewrite come last, after writing and reading back the archive.
    var durations: [Bool: TimeInterval] = [:]
    for archiving in [true, false] {
      let timed = scratch.child("timed-\(archiving)")
      try FileManager.default.copyItem(at: original, to: timed)
      let start = Date()
      let full = try Tool.run(arguments(timed, archive: archiving ? scratch.child("timed.jsonl") : nil))
      durations[archiving] = Date().timeIntervalSince(start)
      #expect(full.status == 0, "stderr: \(full.stderr)")
    }

    var generator = SystemRandomNumberGenerator()
    var outcomes: [UInt64: Int] = [:]
    for round in 0..<12 {
      let archiving = round % 2 == 0
      let duration = durations[archiving]!
      let log = scratch.child("log-\(round)")
      let archive = scratch.child("archive-\(round).jsonl")
      try FileManager.default.copyItem(at: original, to: log)
      let delay =
        archiving
        ? Double.random(in: (duration * 0.7)...(duration * 1.1), using: &generator)
        : Double.random(in: (duration * 0.3)...(duration * 1.3), using: &generator)
      let child = try ChildProcess("logtool", arguments(log, archive: archiving ? archive : nil))
      usleep(UInt32(delay * 1_000_000))
      kill(child.process.processIdentifier, SIGKILL)
      child.wait()

      let reader = try ActionLog(directory: log, access: .readOnly)
      let report = try reader.verify()
      let first = try #require(try reader.bounds()).lowerBound
      let anchor = try reader.meta().anchor.seq
      try reader.close()
      let context = "round \(round) (\(archiving ? "archive" : "discard")), killed after \(delay) s"
      #expect(report.isValid, "\(context): \(report.problems.prefix(3))")
      #expect(first == 1 || first == Self.cut + 1, "\(context): the log starts at \(first)")
      #expect(anchor == first - 1, "\(context)")
      outcomes[first, default: 0] += 1

      let resumed = try Tool.run(arguments(log, archive: archiving ? archive : nil))
      #expect(resumed.status == 0, "\(context): running it again finishes: \(resumed.stderr)")
      let after = try ActionLog(directory: log, access: .readOnly)
      #expect(try after.verify().isValid, "\(context)")
      #expect(try after.bounds()?.lowerBound == Self.cut + 1, "\(context)")
      try after.close()
      if archiving {
        let restored = scratch.child("restored-\(round)")
        let imported = try Tool.run(["import", archive.path, "--into", restored.path])
        #expect(imported.status == 0, "\(context): the archive imports: \(imported.stderr)")
      }
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: log.path).filter { $0.hasPrefix(".") }
      #expect(leftovers.isEmpty, "\(context): no temporary files are left behind: \(leftovers)")
      try FileManager.default.removeItem(at: log)
    }
    #expect(outcomes.values.reduce(0, +) == 12)
  }
}
