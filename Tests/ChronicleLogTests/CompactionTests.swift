import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// A log of `count` CBOR entries with a snapshot every `snapshotEvery` entries.
private func makeLog(at directory: URL, count: Int, snapshotEvery: Int) throws {
  let log = try ActionLog(
    directory: directory, options: .init(durability: .normal, flushInterval: nil, appID: "compaction"))
  defer { try? log.close() }
  for start in stride(from: 1, through: count, by: 1000) {
    let batch = try (start...min(start + 999, count)).map { n in
      try NewEntry(
        encoding: Sample.make(n), typeName: "sample", metadata: ["n": String(n)], codec: n % 2 == 0 ? .cbor : .json)
    }
    let range = try log.append(contentsOf: batch)
    for seq in range where seq % UInt64(snapshotEvery) == 0 {
      try log.writeSnapshot(at: seq, state: Array("state at \(seq)".utf8), codec: .json, schemaVersion: 1)
    }
  }
}

private func dataFileSize(_ directory: URL) throws -> Int {
  let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("data.mdb").path)
  return (attributes[.size] as? NSNumber)?.intValue ?? 0
}

@Suite struct CompactionTests {
  /// Compaction replaces data.mdb and gives it a reader table of its own: `lock.mdb` is there
  /// afterwards (it used to be deleted, and readers then ran without LMDB's locking), it
  /// and readers and a writer use it at once.
  @Test func compactionLeavesAReaderTableForTheNewFile() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try makeLog(at: logURL, count: 3_000, snapshotEvery: 1_000)
    let lockFile = logURL.appendingPathComponent("lock.mdb").path
    let report = try ActionLog.compact(directory: logURL, before: 2_500, disposal: .discard)
    #expect(report.cut == 2_000)
    #expect(FileManager.default.fileExists(atPath: lockFile), "compaction left no lock.mdb")
    #expect(!FileManager.default.fileExists(atPath: logURL.appendingPathComponent(".compact-tmp").path))

    let reader = try ActionLog(directory: logURL, access: .readOnly)
    #expect(try reader.bounds() == 2_001...3_000)
    #expect(try reader.verify().isValid)
    try reader.close()
    let writer = try ActionLog(directory: logURL)
    #expect(try writer.append(try NewEntry(encoding: Sample.make(1), typeName: "sample", codec: .cbor)) == 3_001)
    #expect(try writer.verify().isValid)
    try writer.close()
  }

  @Test func compactionWithAnArchiveShrinksTheFileAndKeepsTheChainVerifiable() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try makeLog(at: logURL, count: 20_000, snapshotEvery: 2_500)
    let before = try RawDump(logURL)
    let headBefore = try ActionLog(directory: logURL, access: .readOnly).head()
    let sizeBefore = try dataFileSize(logURL)
    var stages: Set<CompactionStage> = []

    let archive = dir.child("archive.jsonl")
    let report = try ActionLog.compact(directory: logURL, before: 19_999, disposal: .archive(archive)) { stage, _, _ in
      stages.insert(stage)
    }
    #expect(report.cut == 17_500)
    #expect(report.entriesRemoved == 17_500)
    #expect(report.snapshotsRemoved == 6)
    #expect(report.anchorBefore == .genesis)
    #expect(report.bytesBefore == sizeBefore)
    #expect(report.bytesAfter == (try dataFileSize(logURL)))
    #expect(report.bytesAfter * 4 < report.bytesBefore, "\(report.bytesBefore) → \(report.bytesAfter) bytes")
    #expect(stages == Set(CompactionStage.allCases))
    #expect(!FileManager.default.fileExists(atPath: logURL.appendingPathComponent(".compact-tmp").path))

    let log = try ActionLog(directory: logURL, access: .readOnly)
    let verification = try log.verify()
    #expect(verification.isValid, "\(verification.problems)")
    #expect(try log.bounds() == 17_501...20_000)
    #expect(try log.head() == headBefore)
    let anchor = try log.meta().anchor
    #expect(anchor.seq == 17_500)
    #expect(anchor.hash == before.entries[withUnsafeBytes(of: UInt64(17_500).bigEndian) { Array($0) }]!.suffix(32))
    #expect(try log.snapshots().map(\.seq) == [17_500, 20_000])
    try log.close()

    // Whatever was kept is untouched, byte for byte.
    let after = try RawDump(logURL)
    for (key, value) in after.entries { #expect(before.entries[key] == value) }
    for (key, value) in after.snapshots { #expect(before.snapshots[key] == value) }

    // The archive holds exactly what was removed, and imports into a log that verifies.
    let restored = dir.child("restored")
    let imported = try ActionLog.importLog(from: archive, into: restored)
    #expect(imported.range == 1...17_500)
    #expect(imported.meta.anchor == .genesis)
    let restoredContents = try RawDump(restored)
    #expect(restoredContents.entries.count == 17_500)
    for (key, value) in restoredContents.entries { #expect(before.entries[key] == value) }
    #expect(restoredContents.snapshots.keys.count == 7, "snapshots 2,500 … 17,500")
    let restoredLog = try ActionLog(directory: restored, access: .readOnly)
    #expect(try restoredLog.verify().isValid)
    try restoredLog.close()

    // The compacted log goes on: appends chain from the anchor, and it can be compacted again.
    let writer = try ActionLog(directory: logURL)
    #expect(try writer.append(NewEntry(typeName: "after", codec: .json, payload: Array("{}".utf8))) == 20_001)
    try writer.close()
    let second = try ActionLog.compact(
      directory: logURL, before: 20_001, disposal: .archive(dir.child("archive2.jsonl")))
    #expect(second.cut == 20_000)
    #expect(second.anchorBefore == anchor)
    let secondArchive = try ActionLog.checkExport(at: dir.child("archive2.jsonl"))
    #expect(secondArchive.meta.anchor == anchor, "an archive starts from the anchor its entries follow")
    let restored2 = dir.child("restored2")
    try ActionLog.importLog(from: dir.child("archive2.jsonl"), into: restored2)
    let restoredLog2 = try ActionLog(directory: restored2, access: .readOnly)
    #expect(try restoredLog2.meta().anchor == anchor, "the import's anchor is the archive's anchor")
    #expect(try restoredLog2.bounds() == 17_501...20_000)
    #expect(try restoredLog2.verify().isValid)
    try restoredLog2.close()
    let final = try ActionLog(directory: logURL, access: .readOnly)
    #expect(try final.verify().isValid)
    #expect(try final.bounds() == 20_001...20_001)
    try final.close()
  }

  @Test func discardRemovesWithoutACopyAndACutAtTheHeadLeavesAnEmptyLog() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try makeLog(at: logURL, count: 3_000, snapshotEvery: 1_000)
    let report = try ActionLog.compact(directory: logURL, before: 3_000, disposal: .discard)
    #expect(report.cut == 3_000)
    #expect(report.archive == nil)
    let log = try ActionLog(directory: logURL, access: .readOnly)
    #expect(try log.bounds() == nil)
    #expect(try log.verify().isValid)
    #expect(try log.head().seq == 3_000)
    #expect(try log.latestSnapshot().snapshot?.seq == 3_000, "the snapshot at the cut stays")
    try log.close()
    let writer = try ActionLog(directory: logURL)
    #expect(try writer.append(NewEntry(typeName: "next", codec: .json, payload: Array("1".utf8))) == 3_001)
    try writer.close()
    #expect(try ActionLog(directory: logURL, access: .readOnly).verify().isValid)
  }

  @Test func refusalsChangeNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try makeLog(at: logURL, count: 2_000, snapshotEvery: 1_000)
    let before = try RawDump(logURL)

    let empty = dir.child("empty")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    #expect(throws: LogError.self, "an empty directory is not a log to compact") {
      try ActionLog.compact(directory: empty, before: 10, disposal: .discard)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty, "nothing was created")
    #expect(throws: LogError.self, "no snapshot at or before 999") {
      try ActionLog.compact(directory: logURL, before: 999, disposal: .discard)
    }
    let writer = try ActionLog(directory: logURL)
    let locked = #expect(throws: LogError.self) {
      try ActionLog.compact(directory: logURL, before: 2_000, disposal: .archive(dir.child("a.jsonl")))
    }
    #expect("\(locked.map { "\($0)" } ?? "")".contains("locked"))
    try writer.close()
    try Data("precious".utf8).write(to: dir.child("b.jsonl"))
    #expect(throws: LogError.self, "an unrelated file is never overwritten") {
      try ActionLog.compact(directory: logURL, before: 2_000, disposal: .archive(dir.child("b.jsonl")))
    }
    #expect(try String(contentsOf: dir.child("b.jsonl"), encoding: .utf8) == "precious")
    #expect(!FileManager.default.fileExists(atPath: dir.child("a.jsonl").path))
    #expect(try RawDump(logURL) == before)
  }

  @Test func aLogThatDoesNotVerifyIsNotCompacted() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try makeLog(at: logURL, count: 2_000, snapshotEvery: 1_000)
    let environment = try Environment(path: logURL.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 4))
    let entries = try environment.openDatabase(named: "entries")
    let key = withUnsafeBytes(of: UInt64(10).bigEndian) { Array($0) }
    try environment.write { txn in
      var value = try #require(try txn.get(forKey: key, in: entries))
      value[value.count - 40] ^= 1
      try txn.put(value, forKey: key, in: entries)
    }
    environment.close()
    let before = try RawDump(logURL)
    let error = #expect(throws: LogError.self) {
      try ActionLog.compact(directory: logURL, before: 2_000, disposal: .discard)
    }
    #expect("\(error.map { "\($0)" } ?? "")".contains("first bad entry 10"))
    #expect(try RawDump(logURL) == before)
  }

  @Test func anInterruptedRunIsFinishedByRunningItAgain() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try makeLog(at: logURL, count: 4_000, snapshotEvery: 1_000)
    let archive = dir.child("archive.jsonl")
    // As if killed after the archive was complete: the next run reuses it.
    let log = try ActionLog(directory: logURL, access: .readOnly)
    try log.export(to: archive, through: 3_000)
    try log.close()
    // As if killed during the rewrite: a leftover work directory.
    let work = logURL.appendingPathComponent(".compact-tmp")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    try Data("half a copy".utf8).write(to: work.appendingPathComponent("data.mdb"))

    let report = try ActionLog.compact(directory: logURL, before: 3_500, disposal: .archive(archive))
    #expect(report.archiveReused)
    #expect(report.entriesRemoved == 3_000)
    #expect(!FileManager.default.fileExists(atPath: work.path))
    let again = try ActionLog.compact(directory: logURL, before: 3_500, disposal: .archive(archive))
    #expect(again.entriesRemoved == 0, "a second run finds the cut done and only rewrites")
    let compacted = try ActionLog(directory: logURL, access: .readOnly)
    #expect(try compacted.verify().isValid)
    #expect(try compacted.bounds() == 3_001...4_000)
    try compacted.close()
  }
}
