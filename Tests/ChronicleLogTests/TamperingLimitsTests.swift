import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// What the chain does not cover, as docs/reliability.md lists it: these edits verify OK.
/// If one of them starts to fail verification, the page's list of limits must change with it.
@Suite struct TamperingLimitsTests {
  private func edit(_ url: URL, _ body: (Transaction, Database, Database) throws -> Void) throws {
    let environment = try Environment(path: url.path, configuration: .init(mapSize: 1 << 26, maxDatabases: 4))
    defer { environment.close() }
    let entries = try environment.openDatabase(named: "entries")
    let meta = try environment.openDatabase(named: "meta")
    try environment.write { txn in try body(txn, entries, meta) }
  }

  private func makeLog(_ url: URL) throws -> [UInt8] {
    let log = try ActionLog(directory: url, options: .init(flushInterval: nil, appID: "ledger"))
    defer { try? log.close() }
    for n in 1...200 { try log.append(NewEntry(encoding: n, typeName: "n", codec: .json)) }
    return try #require(try log.record(at: 150)).hash
  }

  /// Deleting the oldest entries and setting the anchor to the last deleted one's hash is
  /// what a compaction does: the log verifies, and says "compacted".
  @Test func aRemovedPrefixWithItsAnchorVerifiesLikeACompaction() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let url = dir.child("log")
    let hash150 = try makeLog(url)
    try edit(url) { txn, entries, meta in
      for seq in UInt64(1)...150 { try withSequenceKey(seq) { _ = try txn.delete(forKey: $0, in: entries) } }
      var anchor = ByteWriter()
      anchor.append(bigEndian: UInt64(150))
      anchor.append(hash150)
      try txn.put(anchor.bytes, forKey: Array(MetaKey.anchor.utf8), in: meta)
    }
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    let report = try log.verify()
    #expect(report.isValid, "\(report.problems)")
    #expect(try log.meta().anchor.seq == 150)
    #expect(try log.bounds() == 151...200)
  }

  /// `app`, `created` and `schema` in meta are outside the chain: changing them verifies OK.
  @Test func changedMetaAppCreatedAndSchemaVerify() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let url = dir.child("log")
    _ = try makeLog(url)
    try edit(url) { txn, _, meta in
      try txn.put(Array("someone-else".utf8), forKey: Array(MetaKey.app.utf8), in: meta)
      try txn.put(bigEndianBytes(Int64(0)), forKey: Array(MetaKey.created.utf8), in: meta)
      try txn.put(bigEndianBytes(UInt32(99)), forKey: Array(MetaKey.schema.utf8), in: meta)
    }
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    #expect(try log.verify().isValid)
    let meta = try log.meta()
    #expect(meta.appID == "someone-else" && meta.created == 0 && meta.schemaVersion == 99)
  }
}

private func bigEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
  withUnsafeBytes(of: value.bigEndian) { Array($0) }
}
