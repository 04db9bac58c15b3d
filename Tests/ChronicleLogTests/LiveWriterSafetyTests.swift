import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What runs beside a live writer never hurts it: a second writer through another name of the
/// data file gets a clear error and writes nothing, a write that finds the log changed under it
/// fails before writing, a reader without a reader table stops when a writer appears, and long
/// readers never hold a read transaction while they hand out what they read.
@Suite(.serialized) struct LiveWriterSafetyTests {
  static func makeLog(at url: URL, count: Int) throws {
    let log = try ActionLog(directory: url, options: .init(durability: .normal, flushInterval: nil))
    if count > 0 {
      _ = try log.append(
        contentsOf: (1...count).map { try NewEntry(encoding: Sample.make($0), typeName: "sample", codec: .cbor) })
    }
    try log.close()
  }

  /// The entries of the log at `url`, read by a fresh reader.
  static func entryCount(_ url: URL) throws -> Int {
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    return try log.count()
  }

  /// Starts a writer process on `url` and waits until it holds the log.
  static func holdWriter(_ url: URL) throws -> ChildProcess {
    let holder = try ChildProcess("chronicle-log-probe", ["hold-writer", url.path], input: true)
    #expect(holder.readLine() == "ready")
    return holder
  }

  @Test func aDeletedLockFileLetsNoSecondWriterIn() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try Self.makeLog(at: dir.url, count: 100)
    let holder = try Self.holdWriter(dir.url)
    try FileManager.default.removeItem(at: dir.child("chronicle.lock"))

    let second = try ChildProcess("chronicle-log-probe", ["try-writer", dir.path])
    let line = second.readLine() ?? ""
    #expect(second.wait() == 3)
    #expect(line.contains("is locked: another writer has it open"), "\(line)")
    // Compaction, the writer that would lose acknowledged entries, is refused the same way.
    let error = #expect(throws: LogError.self) {
      try ActionLog.compact(directory: dir.url, before: 50, disposal: .discard)
    }
    guard case .locked? = error else {
      Issue.record("expected .locked, got \(String(describing: error))")
      return
    }
    holder.closeInput()
    #expect(holder.wait() == 0)
    #expect(try Self.entryCount(dir.url) == 100)
  }

  @Test func aHardLinkedDataFileLetsNoSecondWriterIn() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let original = dir.child("original")
    let linked = dir.child("linked")
    try Self.makeLog(at: original, count: 100)
    try FileManager.default.createDirectory(at: linked, withIntermediateDirectories: false)
    #expect(link(original.appendingPathComponent("data.mdb").path, linked.appendingPathComponent("data.mdb").path) == 0)
    let holder = try Self.holdWriter(original)

    let second = try ChildProcess("chronicle-log-probe", ["try-writer", linked.path])
    let line = second.readLine() ?? ""
    #expect(second.wait() == 3)
    #expect(line.contains("is locked: another writer has it open"), "\(line)")
    #expect(line.contains(linked.path), "\(line)")
    // In this process too (the per-process registry keys on the directory, which differs here).
    #expect(throws: LogError.self) { try ActionLog(directory: linked) }
    holder.closeInput()
    #expect(holder.wait() == 0)
    #expect(try Self.entryCount(original) == 100)
    // Once the first writer is gone, the other name opens.
    let later = try ActionLog(directory: linked)
    #expect(try later.count() == 100)
    try later.close()
  }

  /// A writer trusts no cached head: the log changed under it (here by a raw LMDB environment
  /// on the same files, past every lock of Chronicle's, as a writer that found `chronicle.lock`
  /// deleted did before the data file was locked) makes its next write fail, writing nothing.
  @Test func aWriteThatFindsTheLogChangedFailsAndWritesNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try Self.makeLog(at: dir.url, count: 10)
    let writer = try ActionLog(directory: dir.url, options: .init(durability: .normal, flushInterval: nil))
    try writer.append(try NewEntry(encoding: Sample.make(11), typeName: "sample", codec: .cbor))

    // Another writer appends entry 12 behind the first one's back (sharing lock.mdb, so LMDB
    // serializes the two; a second environment in one process is for this test only).
    let raw = try Environment(path: dir.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 8))
    let entries = try raw.openDatabase(named: "entries")
    let stolen = try #require(try raw.read { try $0.get(forKey: withSequenceKey(11) { Array($0) }, in: entries) })
    try raw.write { txn in try txn.put(stolen, forKey: withSequenceKey(12) { Array($0) }, in: entries) }
    raw.close()

    let error = #expect(throws: LogError.self) {
      try writer.append(try NewEntry(encoding: Sample.make(12), typeName: "sample", codec: .cbor))
    }
    guard case .changedByAnotherWriter(_, let expected, let found)? = error else {
      Issue.record("expected .changedByAnotherWriter, got \(String(describing: error))")
      return
    }
    #expect(expected == 11 && found == 12)
    #expect("\(error!)".contains("nothing was written"))
    try writer.close()
    #expect(try Self.entryCount(dir.url) == 12)
  }

  /// A reader that cannot write the directory reads without LMDB's reader table; when a writer
  /// opens the log it stops with one sentence instead of reading pages the writer reuses, and the
  /// writer opens at once all the same.
  @Test(.enabled(if: geteuid() == 0, "needs root to run a probe as another user"))
  func aLockFreeReaderStopsWhenAWriterAppears() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try Self.makeLog(at: logURL, count: 20_000)
    try FileManager.default.removeItem(at: logURL.appendingPathComponent("lock.mdb"))
    for path in [dir.path, logURL.path] {
      try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
    }
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o644], ofItemAtPath: logURL.appendingPathComponent("data.mdb").path)

    let reader = try ChildProcess("chronicle-log-probe", ["read-as-nobody", logURL.path])
    #expect(reader.readLine() == "reading")
    usleep(300_000)
    let started = Date()
    let writer = try ActionLog(directory: logURL, options: .init(durability: .normal, flushInterval: nil))
    #expect(Date().timeIntervalSince(started) < 2.5, "the writer waited for the reader")
    for n in 1...2_000 {
      try writer.append(try NewEntry(encoding: Sample.make(n), typeName: "sample", codec: .cbor))
    }
    let line = reader.readLine(timeout: 30) ?? "nothing"
    #expect(reader.wait() == 0)
    #expect(line.hasPrefix("stopped: a writer opened \(logURL.path)"), "\(line)")
    #expect(try writer.verify().isValid)
    try writer.close()
  }

  /// The process's read transactions open now (its reader slots that name a snapshot).
  static func openReadTransactions(_ log: ActionLog) throws -> Int {
    try log.environment.readers().filter { $0.pid == getpid() && $0.transactionID != nil }.count
  }

  /// An export hands its output over outside any read transaction: a consumer that stalls (a
  /// blocked pipe) pins no page of the writer's.
  @Test func anExportWritesOutsideItsReadTransactions() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try Self.makeLog(at: dir.url, count: 3 * Int(ActionLog.scanChunk) + 17)
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    var chunks = 0
    var openDuringWrite = 0
    var bytes: [UInt8] = []
    try log.export { chunk in
      chunks += 1
      openDuringWrite += try Self.openReadTransactions(log)
      bytes += chunk
    }
    #expect(chunks >= 4, "the entries come in several transactions")
    #expect(openDuringWrite == 0, "a read transaction was open while the export wrote")
    let lines = bytes.split(separator: UInt8(ascii: "\n"))
    #expect(lines.count >= 3 * Int(ActionLog.scanChunk) + 18)
  }

  /// A verify of a long log renews its read transaction: between its chunks it holds none.
  @Test func aVerifyHoldsNoReadTransactionBetweenChunks() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let count = 3 * Int(ActionLog.scanChunk) + 5
    try Self.makeLog(at: dir.url, count: count)
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    var calls = 0
    var openDuringProgress = 0
    let report = try log.verify { _, _ in
      calls += 1
      openDuringProgress += (try? Self.openReadTransactions(log)) ?? 0
    }
    #expect(report.isValid)
    #expect(report.entriesChecked == count)
    #expect(calls >= 4)
    #expect(openDuringProgress == 0)
  }

  /// A verify beside a writer checks exactly the entries up to the head it read first.
  @Test func aVerifyBesideAWriterChecksUpToItsHead() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try Self.makeLog(at: dir.url, count: 2 * Int(ActionLog.scanChunk))
    let writer = try ActionLog(directory: dir.url, options: .init(durability: .normal, flushInterval: nil))
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    var appended = 0
    let report = try reader.verify { _, _ in
      // Entries appended while the check runs are not its business.
      for _ in 0..<100 {
        appended += 1
        _ = try? writer.append(try! NewEntry(encoding: Sample.make(appended), typeName: "sample", codec: .cbor))
      }
    }
    #expect(report.isValid, "\(report.problems.prefix(3))")
    #expect(report.entriesChecked == 2 * Int(ActionLog.scanChunk))
    #expect(appended > 0)
    try reader.close()
    try writer.close()
  }
}
