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

  /// The same for an encrypted log (`--key-file`), in a few cheap rounds: the records are carried
  /// as stored, so the log left behind opens with the ring at the old first entry or after the cut.
  @Test func anEncryptedLogKilledDuringCompactionStaysValid() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let ring = try KeyRing([.random()])
    let keys = scratch.child("log.keys")
    try ring.fileText.write(to: keys, atomically: true, encoding: .utf8)
    let original = scratch.child("original")
    let writer = try ActionLog(
      directory: original, options: .init(durability: .normal, flushInterval: nil, appID: "tests", keyRing: ring))
    for start in stride(from: 1, through: 4_000, by: 1_000) {
      try writer.append(contentsOf: (start..<(start + 1_000)).map {
        try NewEntry(encoding: String(repeating: "s\($0 % 10)", count: 60), typeName: "set", codec: .json)
      })
      try writer.writeSnapshot(
        at: UInt64(start + 999), state: Array("{\"at\":\(start + 999)}".utf8), codec: .json, schemaVersion: 1)
    }
    try writer.close()
    let arguments = { (log: URL) in ["compact", log.path, "--before", "3500", "--discard", "--key-file", keys.path] }
    let timed = scratch.child("timed")
    try FileManager.default.copyItem(at: original, to: timed)
    let start = Date()
    let full = try Tool.run(arguments(timed))
    let duration = Date().timeIntervalSince(start)
    #expect(full.status == 0, "stderr: \(full.stderr)")

    var generator = SystemRandomNumberGenerator()
    for round in 0..<4 {
      let log = scratch.child("log-\(round)")
      try FileManager.default.copyItem(at: original, to: log)
      let delay = Double.random(in: (duration * 0.3)...(duration * 1.2), using: &generator)
      let child = try ChildProcess("logtool", arguments(log))
      usleep(UInt32(delay * 1_000_000))
      kill(child.process.processIdentifier, SIGKILL)
      child.wait()

      let context = "round \(round), killed after \(delay) s"
      let reader = try ActionLog(directory: log, access: .readOnly, options: .init(keyRing: ring))
      #expect(try reader.verify().isValid, "\(context)")
      let first = try #require(try reader.bounds()).lowerBound
      #expect(first == 1 || first == 3_001, "\(context): the log starts at \(first)")
      #expect(try reader.snapshot(at: first - 1)?.state == (first == 1 ? nil : Array("{\"at\":3000}".utf8)))
      try reader.close()
      let resumed = try Tool.run(arguments(log))
      #expect(resumed.status == 0, "\(context): running it again finishes: \(resumed.stderr)")
      let after = try ActionLog(directory: log, options: .init(keyRing: ring))
      #expect(try after.bounds()?.lowerBound == 3_001, "\(context)")
      #expect(try after.record(at: 3_001)?.payload == Array("\"\(String(repeating: "s1", count: 60))\"".utf8))
      try after.close()
      try FileManager.default.removeItem(at: log)
    }
  }
}
