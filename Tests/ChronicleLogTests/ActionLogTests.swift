import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

private func entry(_ n: Int, codec: PayloadCodec = .cbor, metadata: [String: String] = [:]) throws -> NewEntry {
  try NewEntry(encoding: Sample.make(n), typeName: "sample", metadata: metadata, codec: codec)
}

@Suite struct ActionLogTests {
  @Test func appendsGetGaplessSequenceNumbersAndReadBack() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(appID: "tests"))
    for n in 1...50 {
      let seq = try log.append(try entry(n, codec: n % 2 == 0 ? .json : .cbor, metadata: ["user": "u\(n)"]))
      #expect(seq == UInt64(n))
    }
    #expect(try log.count() == 50)
    #expect(try log.bounds() == 1...50)
    #expect(try log.lastSeq == 50)
    let record = try #require(try log.record(at: 7))
    #expect(record.seq == 7)
    #expect(record.kind == .action)
    #expect(record.typeName == "sample")
    #expect(record.metadata == ["user": "u7"])
    #expect(record.codec == .cbor)
    #expect(try record.codec.decode(Sample.self, from: record.payload) == Sample.make(7))
    #expect(abs(record.date.timeIntervalSinceNow) < 60)
    #expect(try log.record(at: 51) == nil)
    #expect(try log.record(at: 0) == nil)

    #expect(try log.records(in: 10...14).map(\.seq) == [10, 11, 12, 13, 14])
    var backward: [UInt64] = []
    try log.forEach(in: 45...60, reverse: true) { backward.append($0.seq) }
    #expect(backward == [50, 49, 48, 47, 46, 45])
    var all: [UInt64] = []
    try log.forEach { all.append($0.seq) }
    #expect(all == Array(1...50))
    try log.close()
  }

  @Test func batchIsOneTransactionAllOrNone() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    try log.append(try entry(0))
    let range = try log.append(contentsOf: (1...100).map { try entry($0) })
    #expect(range == 2...101)

    // One bad entry (a type name longer than the format allows) fails the whole batch.
    var batch = try (1...10).map { try entry($0) }
    batch[7].typeName = String(repeating: "x", count: 70_000)
    #expect(throws: LogError.self) { try log.append(contentsOf: batch) }
    #expect(try log.count() == 101)
    #expect(try log.head().seq == 101)
    #expect(try log.append(try entry(1)) == 102)
    #expect(try log.verify().isValid)
  }

  @Test func aPayloadThatFailsToEncodeLeavesTheLogUnchanged() throws {
    struct Refuses: Encodable {
      struct Nope: Error {}
      func encode(to encoder: any Encoder) throws { throw Nope() }
    }
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    try log.append(try entry(1))
    let before = try log.head()
    for codec in PayloadCodec.allCases {
      let error = #expect(throws: LogError.self) { try NewEntry(encoding: Refuses(), typeName: "refuses", codec: codec) }
      #expect(error.map { "\($0)" }?.contains("refuses") == true)
    }
    #expect(try log.head() == before)
    #expect(try log.count() == 1)
  }

  @Test func reopeningKeepsEntriesSnapshotsAndChain() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var log = try ActionLog(directory: dir.url, options: .init(appID: "tests", schemaVersion: 3))
    try log.append(contentsOf: (1...20).map { try entry($0) })
    try log.writeSnapshot(at: 10, state: [1, 2, 3], codec: .json, schemaVersion: 2, auxiliary: [9])
    let head = try log.head()
    try log.close()
    #expect(throws: LogError.self) { try log.append(try entry(1)) }

    log = try ActionLog(directory: dir.url, options: .init(appID: "tests"))
    #expect(try log.head() == head)
    #expect(try log.append(try entry(21)) == 21)
    let meta = try log.meta()
    #expect(meta.appID == "tests")
    #expect(meta.schemaVersion == 3)
    #expect(meta.formatVersion == ActionLog.formatVersion)
    let snapshot = try #require(try log.snapshot(at: 10))
    #expect(snapshot.state == [1, 2, 3])
    #expect(snapshot.auxiliary == [9])
    #expect(snapshot.schemaVersion == 2)
    #expect(snapshot.chainHash == (try log.record(at: 10))?.hash)
    #expect(try log.verify().isValid)
    try log.close()
  }

  @Test func snapshotsListDeletePruneAndFindTheLatest() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    try log.append(contentsOf: (1...50).map { try entry($0) })
    for seq in stride(from: 10, through: 50, by: 10) {
      try log.writeSnapshot(at: UInt64(seq), state: Array("state \(seq)".utf8), codec: .json, schemaVersion: 1)
    }
    #expect(throws: LogError.self) { try log.writeSnapshot(at: 99, state: [], codec: .json, schemaVersion: 1) }
    #expect(try log.snapshots().map(\.seq) == [10, 20, 30, 40, 50])
    #expect(try log.latestSnapshot(atOrBefore: 35).snapshot?.seq == 30)
    #expect(try log.deleteSnapshot(at: 30))
    #expect(try log.latestSnapshot(atOrBefore: 35).snapshot?.seq == 20)
    #expect(try log.pruneSnapshots(keepingLatest: 2) == 2)
    #expect(try log.snapshots().map(\.seq) == [40, 50])
    #expect(try log.latestSnapshot(atOrBefore: 39).snapshot == nil)
  }

  @Test func aSecondWriterIsRefusedInThisProcessAndAnother() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    let error = #expect(throws: LogError.self) { try ActionLog(directory: dir.url) }
    #expect(error.map { "\($0)" } == "\(dir.path) is locked: another writer has it open (read-only access still works)")

    let probe = try ChildProcess("chronicle-log-probe", ["try-writer", dir.path])
    #expect(probe.readLine()?.contains("is locked") == true)
    #expect(probe.wait() == 3)

    // Readers are welcome while the writer holds the log.
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    #expect(try reader.count() == 0)
    try reader.close()
    try log.close()
    // Once the writer closes, another process may write.
    let after = try ChildProcess("chronicle-log-probe", ["try-writer", dir.path])
    #expect(after.readLine() == "opened")
    #expect(after.wait() == 0)
  }

  @Test func aWriterInAnotherProcessLocksUsOut() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let holder = try ChildProcess("chronicle-log-probe", ["hold-writer", dir.path], input: true)
    #expect(holder.readLine() == "ready")
    #expect(throws: LogError.self) { try ActionLog(directory: dir.url) }
    #expect(holder.wait() == 0)
    try ActionLog(directory: dir.url).close()
  }

  @Test func aReaderSeesEveryCommitOfAWriterInAnotherProcess() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try ActionLog(directory: dir.url).close()
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    let writer = try ChildProcess("chronicle-log-probe", ["append", dir.path, "300", "normal", "200"])
    var seen = 0
    while let line = writer.readLine() {
      let seq = try #require(UInt64(line))
      // Acknowledged by the other process: visible here at once.
      let record = try #require(try reader.record(at: seq))
      #expect(try record.codec.decode(Int.self, from: record.payload) == Int(seq) - 1)
      #expect(try reader.lastSeq >= seq)
      seen += 1
    }
    #expect(writer.wait() == 0)
    #expect(seen == 300)
    #expect(try reader.verify().isValid)
    #expect(try reader.count() == 300)
  }

  @Test func concurrentAppendersGetUniqueGaplessNumbers() async throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    let seqs = try await withThrowingTaskGroup(of: [UInt64].self) { group in
      for task in 0..<8 {
        group.addTask {
          try (0..<100).map { n in try log.append(try NewEntry(encoding: task * 1000 + n, typeName: "n", codec: .cbor)) }
        }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    #expect(seqs.sorted() == Array(1...800))
    let values = Set(try log.records(in: 1...800).map { try $0.codec.decode(Int.self, from: $0.payload) })
    #expect(values.count == 800)
    #expect(try log.verify().isValid)
  }

  @Test func theMapGrowsPastItsInitialSize() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(initialMapSize: 1 << 20))
    let payload = [UInt8](repeating: 7, count: 16 << 10)
    for _ in 0..<200 {
      try log.append(NewEntry(typeName: "blob", codec: .cbor, payload: payload))
    }
    try log.append(contentsOf: (0..<200).map { _ in NewEntry(typeName: "blob", codec: .cbor, payload: payload) })
    #expect(try log.count() == 400)
    #expect(try log.fileSize() > 4 << 20)
    #expect(try log.verify().isValid)
  }

  @Test func theMapCeilingFailsTheAppendClearlyAndKeepsTheLog() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(initialMapSize: 256 << 10, maxLogSize: 1 << 20))
    let payload = [UInt8](repeating: 7, count: 64 << 10)
    var appended = 0
    let error = #expect(throws: LogError.self) {
      while true {
        try log.append(NewEntry(typeName: "blob", codec: .cbor, payload: payload))
        appended += 1
      }
    }
    #expect(error.map { "\($0)" }?.contains("ceiling") == true)
    #expect(appended > 0)
    #expect(try log.count() == appended)
    #expect(try log.verify().isValid)
    // Reading still works; a smaller append may still fit.
    #expect(try log.record(at: 1)?.payload == payload)
  }

  @Test func durabilityModesBothPersistAndSyncWorks() throws {
    for durability in [Durability.full, .normal] {
      let dir = try TemporaryDirectory()
      defer { dir.remove() }
      let log = try ActionLog(directory: dir.url, options: .init(durability: durability, flushInterval: .milliseconds(10)))
      try log.append(try entry(1))
      try log.sync()
      Thread.sleep(forTimeInterval: 0.05)
      try log.close()
      let reopened = try ActionLog(directory: dir.url, access: .readOnly)
      #expect(try reopened.count() == 1)
    }
  }

  @Test func temporaryLogsVanishOnClose() throws {
    let log = try ActionLog.temporary()
    try log.append(try entry(1))
    let path = log.path
    #expect(FileManager.default.fileExists(atPath: path))
    try log.close()
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func filesAreOwnerOnly() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("a/b/log")
    try ActionLog(directory: logURL).close()
    for (name, mode) in [("", 0o700), ("/data.mdb", 0o600), ("/lock.mdb", 0o600), ("/chronicle.lock", 0o600)] {
      let attributes = try FileManager.default.attributesOfItem(atPath: logURL.path + name)
      #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == mode, "\(name)")
    }
  }
}
