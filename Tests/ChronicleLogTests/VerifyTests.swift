import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// A closed log of `count` entries with snapshots at 10 and 20, and raw LMDB access to tamper with it.
private struct TamperBench {
  let dir: TemporaryDirectory
  var url: URL { dir.url }

  init(count: Int = 30) throws {
    dir = try TemporaryDirectory()
    let log = try ActionLog(directory: dir.url)
    for n in 1...count {
      try log.append(
        try NewEntry(encoding: "payload-\(n)-TAMPER", typeName: "text", metadata: ["n": "\(n)"], codec: n % 2 == 0 ? .json : .cbor))
    }
    try log.writeSnapshot(at: 10, state: Array("state at 10".utf8), codec: .json, schemaVersion: 1)
    try log.writeSnapshot(at: 20, state: Array("state at 20".utf8), codec: .json, schemaVersion: 1)
    try log.close()
  }

  /// Rewrites stored values through LMDB, as an attacker with file access could.
  func edit(_ body: (Transaction, _ entries: Database, _ snapshots: Database) throws -> Void) throws {
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 4))
    defer { env.close() }
    let entries = try env.openDatabase(named: "entries")
    let snapshots = try env.openDatabase(named: "snapshots")
    try env.write { try body($0, entries, snapshots) }
  }

  func report() throws -> VerificationReport {
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    return try log.verify()
  }
}

private func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

@Suite struct VerifyTests {
  @Test func anIntactLogVerifies() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    let report = try bench.report()
    #expect(report.isValid, "\(report.problems)")
    #expect(report.entriesChecked == 30)
    #expect(report.snapshotsChecked == 2)
    #expect(report.range == 1...30)
    let log = try ActionLog(directory: bench.url, access: .readOnly)
    #expect(report.head == (try log.head()).hash)
  }

  @Test func aFlippedPayloadByteInTheFileIsNamedBySeq() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    let dataURL = bench.dir.child("data.mdb")
    var bytes = [UInt8](try Data(contentsOf: dataURL))
    let needle = Array("payload-17-TAMPER".utf8)
    // LMDB's copy-on-write may leave stale copies in free pages: change every copy.
    let places = (0...(bytes.count - needle.count)).filter { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    #expect(!places.isEmpty)
    for at in places { bytes[at + 8] ^= 0x01 }
    try Data(bytes).write(to: dataURL)
    let report = try bench.report()
    #expect(report.firstBadSeq == 17)
    #expect(report.problems.map(\.location) == [.entry(17)])
    #expect(report.problems.first?.message.contains("hash mismatch") == true)
  }

  @Test func aChangedHeaderByteIsNamedBySeq() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    try bench.edit { txn, entries, _ in
      var value = try #require(try txn.get(forKey: key(5), in: entries))
      value[15] ^= 0x40  // a bit of the timestamp
      try txn.put(value, forKey: key(5), in: entries)
      var other = try #require(try txn.get(forKey: key(6), in: entries))
      other[1] = 0x63  // an unknown kind
      try txn.put(other, forKey: key(6), in: entries)
    }
    let report = try bench.report()
    #expect(report.firstBadSeq == 5)
    #expect(report.problems.map(\.location) == [.entry(5), .entry(6)])
    #expect(report.problems[1].message.contains("unknown kind 99"))
    // Reading the damaged entry names it too.
    let log = try ActionLog(directory: bench.url, access: .readOnly)
    let error = #expect(throws: LogError.self) { try log.record(at: 6) }
    #expect(error.map { "\($0)" }?.contains("entry 6 of \(bench.url.path) is corrupt") == true)
  }

  @Test func aChangedSnapshotIsReported() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    try bench.edit { txn, _, snapshots in
      var value = try #require(try txn.get(forKey: key(20), in: snapshots))
      value[62] ^= 0x01  // inside the state
      try txn.put(value, forKey: key(20), in: snapshots)
    }
    let report = try bench.report()
    #expect(report.firstBadSeq == nil)
    #expect(report.problems.map(\.location) == [.snapshot(20)])
    let log = try ActionLog(directory: bench.url, access: .readOnly)
    #expect(throws: LogError.self) { try log.snapshot(at: 20) }
    let latest = try log.latestSnapshot()
    #expect(latest.snapshot?.seq == 10)
    #expect(latest.skipped.count == 1)
  }

  @Test func aSnapshotMovedToAnotherSeqIsReported() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    try bench.edit { txn, _, snapshots in
      let value = try #require(try txn.get(forKey: key(10), in: snapshots))
      try txn.put(value, forKey: key(11), in: snapshots)
    }
    let report = try bench.report()
    #expect(report.problems.map(\.location) == [.snapshot(11)])
  }

  @Test func aRemovedEntryIsAGap() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    try bench.edit { txn, entries, _ in try txn.delete(forKey: key(12), in: entries) }
    let report = try bench.report()
    #expect(report.firstBadSeq == 12)
    #expect(report.problems.first?.message.contains("missing") == true)
  }

  @Test func swappedEntriesBreakTheChain() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    try bench.edit { txn, entries, _ in
      let three = try #require(try txn.get(forKey: key(3), in: entries))
      let four = try #require(try txn.get(forKey: key(4), in: entries))
      try txn.put(four, forKey: key(3), in: entries)
      try txn.put(three, forKey: key(4), in: entries)
    }
    #expect(try bench.report().firstBadSeq == 3)
  }

  @Test func anInsertedEntryBreaksTheChain() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    try bench.edit { txn, entries, _ in
      // Shift 8…30 up by one and put a copy of entry 7 at 8.
      for seq in (8...30).reversed() {
        let value = try #require(try txn.get(forKey: key(UInt64(seq)), in: entries))
        try txn.put(value, forKey: key(UInt64(seq + 1)), in: entries)
      }
      try txn.put(try #require(try txn.get(forKey: key(7), in: entries)), forKey: key(8), in: entries)
    }
    let report = try bench.report()
    #expect(report.firstBadSeq == 8)
  }

  @Test func anEntryRewrittenWithARecomputedHashIsCaughtByItsSuccessor() throws {
    let bench = try TamperBench()
    defer { bench.dir.remove() }
    try bench.edit { txn, entries, _ in
      let previous = Array(try #require(try txn.get(forKey: key(8), in: entries)).suffix(32))
      let value = try #require(try txn.get(forKey: key(9), in: entries))
      var body = Array(value.dropLast(32))
      body[body.count - 1] = UInt8(ascii: "S")  // the payload's last character: "…TAMPER" becomes "…TAMPES"
      let hash = body.withUnsafeBytes { Chain.hash(previous: previous, seq: 9, body: $0) }
      try txn.put(body + hash, forKey: key(9), in: entries)
    }
    let report = try bench.report()
    #expect(report.problems.map(\.location) == [.entry(10)])
  }
}
