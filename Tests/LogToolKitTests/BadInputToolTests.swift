import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Bad input exits 2 with exactly one line on standard error that names the path and the reason.
@Suite struct BadInputToolTests {
  private func expectRefusal(
    _ arguments: [String], naming path: String, because reason: String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let result = try Tool.run(arguments)
    #expect(result.status == 2, "exit status \(result.status)", sourceLocation: sourceLocation)
    #expect(result.errorLines.count == 1, "one line on stderr: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.contains(path), "names \(path): \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.contains(reason), "says '\(reason)': \(result.stderr)", sourceLocation: sourceLocation)
  }

  private static let readOnlyCommands: [[String]] = [
    ["info"], ["list"], ["show", "1"], ["tail"], ["verify"], ["stats"], ["snapshots"], ["export", "-o", "/dev/null"],
  ]

  @Test func noSuchPath() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let missing = scratch.child("missing").path
    for command in Self.readOnlyCommands {
      try expectRefusal([command[0], missing] + command.dropFirst(), naming: missing, because: "does not exist")
    }
    try expectRefusal(["compact", missing, "--before", "1", "--discard"], naming: missing, because: "does not exist")
    #expect(!FileManager.default.fileExists(atPath: missing), "compact created nothing")
    try expectRefusal(
      ["import", missing, "--into", scratch.child("new").path], naming: missing, because: "no such file")
  }

  @Test func aFileInsteadOfALog() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let file = scratch.child("notes.txt")
    try Data("hello\n".utf8).write(to: file)
    for command in Self.readOnlyCommands {
      try expectRefusal([command[0], file.path] + command.dropFirst(), naming: file.path, because: "not a directory")
    }
    try expectRefusal(
      ["import", file.path, "--into", scratch.child("new").path], naming: file.path, because: "not a Chronicle export")
    #expect(!FileManager.default.fileExists(atPath: scratch.child("new").path))
  }

  @Test func aDirectoryThatIsNotALog() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let directory = scratch.child("photos")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try Data("jpeg".utf8).write(to: directory.appendingPathComponent("cat.jpg"))
    for command in Self.readOnlyCommands {
      try expectRefusal(
        [command[0], directory.path] + command.dropFirst(), naming: directory.path, because: "not a Chronicle log")
    }
    try expectRefusal(
      ["compact", directory.path, "--before", "1", "--discard"], naming: directory.path, because: "not a Chronicle log")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cat.jpg"], "nothing was created")
  }

  @Test func aNewerFormat() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    try writeFormatVersion(3, in: log)
    for command in Self.readOnlyCommands {
      try expectRefusal([command[0], log.path] + command.dropFirst(), naming: log.path, because: "log format 3")
    }
    try expectRefusal(["compact", log.path, "--before", "250", "--discard"], naming: log.path, because: "log format 3")
  }

  @Test func compactWhileAWriterHoldsTheLog() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    // A first writer gives the format-1 fixture its Merkle tree and log id.
    try ActionLog(directory: log).close()
    let before = try RawDump(log)
    let writer = try ActionLog(directory: log)
    try expectRefusal(
      ["compact", log.path, "--before", "250", "--archive", scratch.child("a.jsonl").path], naming: log.path,
      because: "locked")
    #expect(try Tool.run(["verify", log.path]).status == 0, "readers still work while the writer holds the log")
    try writer.close()
    #expect(try RawDump(log) == before, "nothing was changed")
    #expect(!FileManager.default.fileExists(atPath: scratch.child("a.jsonl").path), "no archive was written")
  }

  @Test func unknownSequenceNumber() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    try expectRefusal(["show", log.path, "999"], naming: log.path, because: "has no entry 999")
    try expectRefusal(["show", log.path, "0"], naming: log.path, because: "has no entry 0")
    try expectRefusal(["compact", log.path, "--before", "50", "--discard"], naming: log.path, because: "no snapshot")
  }

  @Test func importIntoANonEmptyDirectoryOrOverAnExport() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    let export = scratch.child("export.jsonl")
    #expect(try Tool.run(["export", log.path, "-o", export.path]).status == 0)
    try expectRefusal(["export", log.path, "-o", export.path], naming: export.path, because: "already exists")
    try expectRefusal(["import", export.path, "--into", log.path], naming: log.path, because: "not empty")
  }

  @Test func aLogThatDoesNotVerifyExitsOne() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    try tamper(log, seq: 42)
    let result = try Tool.run(["verify", log.path])
    #expect(result.status == 1)
    #expect(result.stdout.contains("first bad entry 42"))
    #expect(result.stdout.contains("entry 42: hash mismatch"))
    #expect(result.errorLines.count == 1)
    #expect(result.stderr.contains(log.path) && result.stderr.contains("entry 42"))
    let json = try Tool.run(["verify", log.path, "--json"])
    #expect(json.status == 1)
    #expect(json.stdout.contains(#""firstBadSeq":42"#))
    let compacted = try Tool.run(["compact", log.path, "--before", "250", "--discard"])
    #expect(compacted.status == 1, "a log that does not verify is not compacted")
    #expect(compacted.stderr.contains("does not verify"))
    let exported = try Tool.run(["export", log.path, "-o", scratch.child("x.jsonl").path])
    #expect(exported.status == 1, "a log that does not verify is not exported")
    #expect(exported.stderr.contains("entry 42"))
  }
}

/// Negative numbers, leftovers of killed imports, and a file size limit.
@Suite struct BadInputToolMoreTests {
  /// An error naming a path that holds a line break stays one line: the break is written `\n`.
  @Test func anErrorNamingAPathWithALineBreakIsOneLine() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("two\nlines")
    try Repository.copyFixture(to: log)
    try Data("x".utf8).write(to: log.appendingPathComponent("data.mdb"))
    for arguments in [["verify", log.path], ["info", scratch.child("no\nsuch").path]] {
      let result = await ExtremeValueToolTests.run(arguments)
      #expect(result.status == 2, "\(result.stderr)")
      #expect(result.errorLines.count == 1, "\(result.stderr)")
      #expect(result.stderr.contains("\\n"), "\(result.stderr)")
    }
  }

  @Test func negativeNumbersAreNamedAsSuch() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    let cases: [([String], String)] = [
      (["show", log.path, "-1"], "-1: sequence numbers and counts must not be negative"),
      (["show", log.path, "-1", "--json"], "-1: sequence numbers and counts must not be negative"),
      (["list", log.path, "--limit", "-1"], "--limit must not be negative (got -1)"),
      (["list", log.path, "--from", "-5"], "--from must not be negative (got -5)"),
      (["tail", log.path, "-n", "-3"], "-n must not be negative (got -3)"),
      (["compact", log.path, "--before", "-1", "--discard"], "--before must not be negative (got -1)"),
    ]
    for (arguments, message) in cases {
      let result = await ExtremeValueToolTests.run(arguments)
      #expect(result.status == 2, "\(arguments): \(result.status)")
      #expect(result.errorLines.count == 1, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
    let real = try Tool.run(["list", log.path, "--limit", "-1"])
    #expect(real.status == 2 && real.stderr == "logtool: --limit must not be negative (got -1)\n", "\(real.stderr)")
  }

  /// `import` killed with SIGKILL leaves its hidden directory; `info` reports it and the next
  /// import into the same place removes it.
  @Test func aKilledImportIsReportedAndCleanedUp() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 15_000, snapshotEvery: 5_000, payloadBytes: 100)
    let export = scratch.child("x.jsonl")
    #expect(try Tool.run(["export", log.path, "-o", export.path]).status == 0)
    let destination = scratch.child("restored")
    var killed = 0
    for _ in 0..<3 where killed == 0 {
      let child = try ChildProcess("logtool", ["import", export.path, "--into", destination.path])
      let deadline = Date().addingTimeInterval(30)
      var hidden: [String] = []
      while child.process.isRunning, Date() < deadline, hidden.isEmpty {
        hidden = (try? FileManager.default.contentsOfDirectory(atPath: scratch.path))?
          .filter { $0.hasPrefix(".restored.import-") } ?? []
        usleep(1_000)
      }
      if child.process.isRunning, !hidden.isEmpty {
        usleep(50_000)
        kill(child.process.processIdentifier, SIGKILL)
        killed += 1
      }
      child.wait()
      if FileManager.default.fileExists(atPath: destination.path) {
        try FileManager.default.removeItem(at: destination)
      }
    }
    try #require(killed == 1, "an import was killed while it built its hidden directory")
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
      .filter { $0.hasPrefix(".restored.import-") }
    #expect(leftovers.count == 1, "the kill left the hidden directory: \(leftovers)")

    try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
    #expect(try Tool.run(["import", export.path, "--into", scratch.child("elsewhere").path]).status == 0)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".restored.import-") }
        == leftovers, "an import elsewhere leaves it alone")
    try FileManager.default.removeItem(at: destination)
    try Repository.copyFixture(to: destination)
    let info = try Tool.run(["info", destination.path])
    #expect(info.status == 0)
    #expect(info.stdout.contains("leftovers") && info.stdout.contains(leftovers[0]), "\(info.stdout)")
    #expect(info.stdout.contains("from a killed import"), "\(info.stdout)")
    let json = try Tool.run(["info", destination.path, "--json"])
    #expect(json.stdout.contains(#""origin":"import""#) && json.stdout.contains(#""creatorRunning":false"#))
    try FileManager.default.removeItem(at: destination)

    let imported = try Tool.run(["import", export.path, "--into", destination.path])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".") }.isEmpty,
      "the next import into the same place removed the leftover")
  }

  /// What a killed compaction leaves inside the log is listed by `info` and removed by the
  /// next compaction (which holds the writer lock, so no other compaction can be using it).
  @Test func aCompactionsWorkDirectoryIsReportedAndRemovedByTheNextOne() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    let work = log.appendingPathComponent(".compact-tmp")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: false)
    try Data(repeating: 1, count: 4096).write(to: work.appendingPathComponent("data.mdb"))
    let info = await ExtremeValueToolTests.run(["info", log.path])
    #expect(info.status == 0)
    #expect(
      info.stdout.contains("\(work.path) (4,096 bytes (4.0 KiB)) from an interrupted compaction"), "\(info.stdout)")
    let compacted = await ExtremeValueToolTests.run(["compact", log.path, "--before", "250", "--discard"])
    #expect(compacted.status == 0, "\(compacted.stderr)")
    #expect(!FileManager.default.fileExists(atPath: work.path))
    #expect(await !ExtremeValueToolTests.run(["info", log.path]).stdout.contains("leftovers"))
  }

  /// A file size limit (`ulimit -f`, with SIGXFSZ ignored as a shell's `trap` does) stops an
  /// import with "file too large" naming the file, not an LMDB input/output error.
  @Test func aFileSizeLimitIsReportedAsFileTooLarge() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 6_000, snapshotEvery: 3_000, payloadBytes: 200)
    let export = scratch.child("x.jsonl")
    #expect(try Tool.run(["export", log.path, "-o", export.path]).status == 0)
    let destination = scratch.child("restored")
    let command =
      "trap '' XFSZ; ulimit -f 1024; "
      + "exec '\(Helpers.url("logtool").path)' import '\(export.path)' --into '\(destination.path)'"
    let run = try ChildProcess.run(executable: URL(fileURLWithPath: "/bin/bash"), ["-c", command])
    let stderr = run.stderr
    #expect(run.status == 1, "\(stderr)")
    #expect(stderr.contains("file too large: \(destination.path)/data.mdb"), "\(stderr)")
    #expect(stderr.contains("1048576 bytes"), "\(stderr)")
    #expect(!stderr.contains("LMDB code"), "\(stderr)")
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".") }.isEmpty)
  }
}

/// Flips one byte of entry `seq`'s type name through the LMDB module.
func tamper(_ directory: URL, seq: UInt64) throws {
  let dump = try RawDump(directory)
  let key = withUnsafeBytes(of: seq.bigEndian) { Array($0) }
  var value = try #require(dump.entries[key])
  value[24] ^= 0x20
  try withRawEnvironment(directory) { environment, entries, _ in
    try environment.write { txn in try txn.put(value, forKey: key, in: entries) }
  }
}
