import Foundation
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// ``ActionLog/scanCopied(in:_:)``, the shipper's read: the entries as ``ActionLog/scan(in:opening:_:)``
/// gives them unopened, field for field, and the same failure at the same entry.
@Suite struct CopiedScanTests {
  /// What a test compares of a view: every field a reader of stored entries uses.
  struct Fields: Equatable {
    var seq: UInt64, kind: EntryKind, typeName: String, timestamp: Int64, metadata: [String: String]
    var payload: [UInt8], body: [UInt8], hash: [UInt8], keyID: UInt32?

    init(_ view: EntryView) {
      (seq, kind, typeName, timestamp) = (view.seq, view.kind, view.typeName, view.timestamp)
      metadata = view.sealedKeyID == nil ? view.metadata : [:]
      (payload, body, hash, keyID) = (Array(view.payload), Array(view.body), Array(view.hash), view.sealedKeyID)
    }
  }

  /// The fields each scan gave, and the error it ended with.
  func both(_ log: ActionLog, _ range: ClosedRange<UInt64>) -> (scanned: [Fields], copied: [Fields], errors: [String?]) {
    var scanned: [Fields] = [], copied: [Fields] = [], errors: [String?] = []
    do { try log.scan(in: range, opening: { _ in false }) { scanned.append(Fields($0)) }; errors.append(nil) } catch {
      errors.append("\(error)")
    }
    do { try log.scanCopied(in: range) { copied.append(Fields($0)) }; errors.append(nil) } catch {
      errors.append("\(error)")
    }
    return (scanned, copied, errors)
  }

  func entry(_ n: Int) -> NewEntry {
    NewEntry(
      typeName: n % 2 == 0 ? "deposit" : "withdraw", metadata: n % 3 == 0 ? ["who": "teller-\(n)"] : [:], codec: .json,
      payload: Array("{\"n\":\(n)}".utf8))
  }

  @Test(arguments: [false, true]) func givesWhatAScanGivesUnopened(encrypted: Bool) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = encrypted ? try KeyRing([.random()]) : nil
    let log = try ActionLog(
      directory: dir.url, options: ActionLog.Options(durability: .normal, flushInterval: nil, appID: "scan", keyRing: ring))
    defer { try? log.close() }
    // More than one read transaction's worth (ActionLog.scanChunk).
    let count = Int(ActionLog.scanChunk) * 2 + 100
    try log.append(contentsOf: (1...count).map(entry))
    for range: ClosedRange<UInt64> in [1...UInt64(count), 4_000...4_200, 7...7] {
      let (scanned, copied, errors) = both(log, range)
      #expect(errors == [nil, nil])
      #expect(copied.count == range.count && copied == scanned, "\(range)")
      #expect(copied.allSatisfy { ($0.keyID != nil) == encrypted })
    }
  }

  @Test func aMissingEntryEndsItThereAfterTheEntriesBefore() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    do {
      let log = try ActionLog(directory: dir.url, options: ActionLog.Options(durability: .normal, flushInterval: nil))
      defer { try? log.close() }
      try log.append(contentsOf: (1...200).map(entry))
    }
    try changeEntry(150, in: dir) { $0 = nil }
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    let (scanned, copied, errors) = both(log, 1...200)
    #expect(copied.map(\.seq) == Array(1...149) && copied == scanned)
    #expect(errors[1] != nil && errors[1] == errors[0])
    #expect(errors[1]?.contains("150") == true)
  }
}
