import ChronicleLog
import Foundation
import ChronicleLMDB
import LogToolKit
import ChronicleTestTools
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The tools on logs that an operator meets beside a live app: stray keys far past the others,
/// the leftover of a killed import, an export whose reader goes away.
@Suite(.serialized) struct LiveLogToolTests {
  /// A stray entry keyed 2^63 or 2^64 − 1 (a copy of entry 3's bytes): every command ends within
  /// seconds with 0, or with 1 or 2 and one line, where `list` and `stats` used to walk 2^53
  /// empty chunks or crash.
  @Test(arguments: [UInt64(1) << 63, UInt64.max])
  func everyCommandEndsOnAStrayKey(_ stray: UInt64) async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 3, snapshotEvery: 2)
    try withRawEnvironment(log) { environment, entries, _ in
      let third = try environment.read { txn in
        try txn.get(forKey: withUnsafeBytes(of: UInt64(3).bigEndian) { Array($0) }, in: entries)
      }
      try environment.write { txn in
        try txn.put(try #require(third), forKey: withUnsafeBytes(of: stray.bigEndian) { Array($0) }, in: entries)
      }
    }
    let started = Date()
    try await ExtremeValueToolTests.everyCommand(on: log, scratch: scratch, context: "stray key \(stray)")
    for arguments in [["list", log.path, "--reverse"], ["list", log.path, "--jsonl"], ["tail", log.path, "-n", "2"]] {
      let result = await ExtremeValueToolTests.run(arguments)
      #expect(result.status <= 2, "logtool \(arguments.joined(separator: " ")): \(result.status)")
    }
    #expect(Date().timeIntervalSince(started) < 30, "every command on a stray key ends within seconds")
  }

  /// An export whose header names entries it does not count (`last` 2^64 − 1) is refused, and
  /// the refused import leaves no directory.
  @Test(arguments: [#""last":3"#, #""entries":3"#, #""first":1"#])
  func anImportWhoseHeaderDisagreesIsRefused(_ field: String) async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 3, snapshotEvery: 2)
    let export = scratch.child("export.jsonl")
    #expect(await ExtremeValueToolTests.run(["export", log.path, "-o", export.path]).status == 0)
    let text = try String(contentsOf: export, encoding: .utf8)
    let name = field.split(separator: ":")[0]
    #expect(text.contains(field))
    try text.replacingOccurrences(of: field, with: "\(name):18446744073709551615").write(
      to: export, atomically: true, encoding: .utf8)
    let destination = scratch.child("imported")
    let result = await ExtremeValueToolTests.run(["import", export.path, "--into", destination.path])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("line 1"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".") }.isEmpty)
  }

  /// `list` shows the stray entry where the cursor finds it, and stops.
  @Test func listShowsAStrayEntryAndEnds() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 3, snapshotEvery: 2)
    try withRawEnvironment(log) { environment, entries, _ in
      try environment.write { txn in
        let third = try #require(try txn.get(forKey: withUnsafeBytes(of: UInt64(3).bigEndian) { Array($0) }, in: entries))
        try txn.put(third, forKey: withUnsafeBytes(of: UInt64.max.bigEndian) { Array($0) }, in: entries)
      }
    }
    let result = await ExtremeValueToolTests.run(["list", log.path, "--jsonl"])
    #expect(result.status == 0, "\(result.stderr)")
    let seqs = result.stdout.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? NSNumber
    }
    #expect(seqs.map(\.uint64Value) == [1, 2, 3, UInt64.max])
  }

  /// An import killed part way leaves a hidden directory that every tool refuses as unfinished
  /// (it used to verify as a log), and `info` on the destination names it.
  @Test func aKilledImportIsRecognisedAsUnfinished() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 200_000, snapshotEvery: 50_000)
    let export = scratch.child("export.jsonl")
    #expect(try Tool.run(["export", log.path, "-o", export.path]).status == 0)
    let destination = scratch.child("imported")

    let importer = try ChildProcess("logtool", ["import", export.path, "--into", destination.path])
    // Kill it once its hidden directory holds some entries.
    var leftover: String?
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline, importer.isRunning {
      let names = (try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []
      if let name = names.first(where: { $0.hasPrefix(".imported.import-") }),
        let size = try? FileManager.default.attributesOfItem(atPath: scratch.path + "/" + name + "/data.mdb")[.size]
          as? Int, size > 4 << 20
      {
        leftover = scratch.path + "/" + name
        break
      }
      usleep(2_000)
    }
    importer.kill()
    _ = importer.wait()
    let hidden = try #require(leftover, "the import finished before it could be killed")

    for arguments in [["verify", hidden], ["info", hidden], ["list", hidden], ["export", hidden, "-o", "-"]] {
      let result = await ExtremeValueToolTests.run(arguments)
      #expect(result.status == 2, "logtool \(arguments.joined(separator: " ")): \(result.status) \(result.stderr)")
      #expect(result.stderr.contains("is an unfinished import"), "\(result.stderr)")
      #expect(result.errorLines.count == 1)
    }
    let info = await ExtremeValueToolTests.run(["info", destination.path])
    #expect(info.status == 2)
    #expect(info.stderr.contains(hidden) && info.stderr.contains("from a killed import"), "\(info.stderr)")
    // The next import into the same place clears it and completes.
    #expect(try Tool.run(["import", export.path, "--into", destination.path]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: hidden))
    #expect(try Tool.run(["verify", destination.path]).status == 0)
  }

  /// `export -` ends with 0 when its reader goes away (`| head -c`): it stops at the chunk after.
  @Test func anExportToAClosedPipeStops() throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 100_000, snapshotEvery: 50_000)
    let script = "\"$0\" export \"$1\" -o - | head -c 1000 >/dev/null; echo \"${PIPESTATUS[0]}\""
    let started = Date()
    let result = try ChildProcess.run(
      executable: URL(fileURLWithPath: "/bin/bash"), ["-c", script, Helpers.url("logtool").path, log.path], timeout: 60)
    #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(result.stdout) \(result.stderr)")
    #expect(Date().timeIntervalSince(started) < 20)
  }

  /// `tail --follow` run by a user who cannot write the log's directory (so it reads without a
  /// reader table) ends with one sentence when the owner's app opens the log, instead of reading
  /// pages the writer reuses or going on silently.
  @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")))
  func aFollowerWithoutAReaderTableStopsWhenAWriterAppears() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 100, snapshotEvery: 1_000_000)
    try FileManager.default.removeItem(at: log.appendingPathComponent("lock.mdb"))
    for (path, mode) in [(scratch.path, 0o755), (log.path, 0o755), (log.path + "/data.mdb", 0o644)] {
      try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }
    // A copy of logtool that the other user can reach (the build directory may be private).
    let logtool = scratch.child("logtool")
    try FileManager.default.copyItem(at: Helpers.url("logtool"), to: logtool)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: logtool.path)
    let follower = try ChildProcess(
      executable: URL(fileURLWithPath: "/usr/sbin/runuser"),
      ["-u", "nobody", "--", logtool.path, "tail", log.path, "--follow"], errors: .capture)
    #expect(follower.waitFor(timeout: 30) { $0.count >= 3 }, "the follower printed the last entries")
    let writer = try ActionLog(directory: log, options: .init(durability: .normal, flushInterval: nil))
    try writer.append(NewEntry(typeName: "late", codec: .json, payload: Array("1".utf8)))
    let status = follower.wait(timeout: 20)
    try writer.close()
    #expect(!follower.timedOut, "the follower ended by itself")
    #expect(status == 2)
    let errors = follower.errors?.texts ?? []
    #expect(errors.count == 1 && errors[0].contains("a writer opened \(log.path)"), "\(errors)")
  }

  // MARK: - The torture's reader leg

  /// What one writing run left: the entries it added, acknowledged, and the bytes it grew the file by.
  struct WritingRun {
    var acknowledged = 0
    var entries = 0
    var grownBy = 0
    var bytesPerEntry: Double { Double(grownBy) / Double(max(entries, 1)) }
  }

  /// A writer appends for `seconds` (killed with SIGKILL half way and restarted when
  /// `killWriter`), while `readers` runs beside it; then the log must verify and hold every
  /// acknowledged entry.
  static func writingRun(seconds: Int, killWriter: Bool, readers: ((URL, () -> Bool) throws -> Void)?) throws
    -> WritingRun
  {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 1_000, snapshotEvery: 1_000_000)
    let before = try FileManager.default.attributesOfItem(atPath: log.path + "/data.mdb")[.size] as? Int ?? 0
    var run = WritingRun()
    let legs = killWriter ? [seconds / 2, seconds - seconds / 2] : [seconds]
    for (index, leg) in legs.enumerated() {
      // The writer that is killed would write longer: it is killed after `leg` seconds, mid-write.
      let killHere = killWriter && index == 0
      let writer = try ChildProcess("chronicle-log-probe", ["append-for", log.path, "\((killHere ? 2 : 1) * leg * 1000)"])
      #expect(writer.waitFor(timeout: 60) { $0.contains { $0.text.hasPrefix("at ") } })
      let end = Date().addingTimeInterval(TimeInterval(leg))
      if let readers {
        try readers(log) { writer.isRunning && Date() < end }
      }
      while writer.isRunning, Date() < end { usleep(10_000) }
      if killHere {
        writer.kill()
        _ = writer.wait()
        // Every "at N" line was printed after entry N was acknowledged.
        let last = writer.output.texts.last { $0.hasPrefix("at ") }.flatMap { Int($0.dropFirst(3)) } ?? 0
        run.acknowledged += last
      } else {
        #expect(writer.wait(timeout: 120) == 0)
        let done = writer.output.texts.last { $0.hasPrefix("done ") } ?? ""
        run.acknowledged += Int(done.split(separator: " ").dropFirst().first ?? "") ?? 0
      }
    }
    let reader = try ActionLog(directory: log, access: .readOnly)
    defer { try? reader.close() }
    let report = try reader.verify()
    #expect(report.isValid, "\(report.problems.prefix(3))")
    run.entries = try reader.count() - 1_000
    #expect(run.entries >= run.acknowledged, "every acknowledged entry is in the log")
    let after = try FileManager.default.attributesOfItem(atPath: log.path + "/data.mdb")[.size] as? Int ?? 0
    run.grownBy = after - before
    return run
  }

  /// Runs `script` with bash (`$0` is logtool, `$1` the log) in the background, its output sent
  /// nowhere (so that no process it starts holds the pipe that ``ChildProcess`` waits on).
  static func shell(_ script: String, _ log: URL) throws -> ChildProcess {
    try ChildProcess(
      executable: URL(fileURLWithPath: "/bin/bash"), ["-c", "exec >/dev/null 2>&1; " + script, Helpers.url("logtool").path, log.path],
      errors: .discard)
  }

  /// The operator's tools beside a writer that is killed and restarted: exports cut short by
  /// `head`, an export whose consumer stalls, verifies run whole and killed, `tail --follow`, and a
  /// compaction (refused). The file grows at most 3× as fast per entry as with no reader, and every
  /// acknowledged entry is there.
  @Test func operatorToolsBesideAWriterKeepItsFileSmall() throws {
    let alone = try Self.writingRun(seconds: 6, killWriter: true, readers: nil)
    let beside = try Self.writingRun(seconds: 6, killWriter: true) { log, writing in
      // The stalled export ends when `sleep` does (its next write fails).
      let stalled = try Self.shell("\"$0\" export \"$1\" -o - | sleep 8", log)
      let follower = try Self.shell("exec \"$0\" tail \"$1\" --follow", log)
      defer {
        follower.kill()
        _ = stalled.wait(timeout: 30)
      }
      var round = 0
      while writing() {
        round += 1
        _ = try Self.shell("\"$0\" export \"$1\" -o - | head -c 1000", log).wait(timeout: 60)
        if round % 3 == 0 {
          let verifier = try ChildProcess("logtool", ["verify", log.path], errors: .discard)
          usleep(150_000)
          verifier.kill()
          _ = verifier.wait()
        }
        if round % 5 == 0 { _ = try Tool.run(["verify", log.path]) }
        if round % 7 == 0 {
          let compaction = try Tool.run(["compact", log.path, "--before", "500", "--discard"])
          #expect(compaction.status == 2 && compaction.stderr.contains("is locked"), "\(compaction.stderr)")
        }
      }
    }
    let factor = beside.bytesPerEntry / alone.bytesPerEntry
    print(
      "reader leg: \(String(format: "%.0f", alone.bytesPerEntry)) bytes/entry alone, "
        + "\(String(format: "%.0f", beside.bytesPerEntry)) with readers: \(String(format: "%.2f", factor))x")
    #expect(factor <= 3, "the file grew \(factor)x as fast per entry with the readers beside the writer")
  }
}

