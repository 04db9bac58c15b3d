import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

// MARK: - Helpers

/// Entry `n`'s payload: its number, so a scan's order and contents can be checked.
private func numbered(_ n: Int) -> NewEntry {
  NewEntry(
    typeName: "deposit", metadata: n % 3 == 0 ? ["who": "teller-\(n)"] : [:], codec: .json,
    payload: Array("{\"n\":\(n)}".utf8))
}

private func ledgerOptions(_ ring: KeyRing?) -> ActionLog.Options {
  ActionLog.Options(durability: .normal, flushInterval: nil, appID: "scan", keyRing: ring)
}

/// Changes entry `seq`'s stored value with `change` (the hash is left: a scan does not check it).
func changeEntry(_ seq: UInt64, in dir: TemporaryDirectory, _ change: (inout [UInt8]?) -> Void) throws {
  let environment = try Environment(path: dir.url.path, configuration: .init(mapSize: 1 << 26, maxDatabases: 8))
  defer { environment.close() }
  let entries = try environment.openDatabase(named: "entries")
  try environment.write { txn in
    var value = try txn.get(forKey: sequenceKey(seq), in: entries)
    change(&value)
    if let value { try txn.put(value, forKey: sequenceKey(seq), in: entries) } else {
      _ = try txn.delete(forKey: sequenceKey(seq), in: entries)
    }
  }
}

/// What a scan of `range` gave `body`: the payloads, and the error it ended with.
private func scanned(_ log: ActionLog, _ range: ClosedRange<UInt64>) -> (payloads: [String], error: String?) {
  var payloads: [String] = []
  do {
    try log.scan(in: range) { entry in
      #expect(entry.sealed == nil)
      payloads.append(String(decoding: entry.payload, as: UTF8.self) + (entry.metadata["who"] ?? ""))
    }
  } catch {
    return (payloads, "\(error)")
  }
  return (payloads, nil)
}

private func expected(_ numbers: ClosedRange<Int>) -> [String] {
  numbers.map { "{\"n\":\($0)}" + ($0 % 3 == 0 ? "teller-\($0)" : "") }
}

// MARK: - Tests

/// Long scans of an encrypted log, across the scan's read transactions: the same entries in the
/// same order as one by one, and the same error at the same entry when one fails, with the entries
/// before it all delivered.
@Suite struct EncryptedScanTests {
  static let count = 3_109

  @Test func aLongScanOpensEveryEntryInOrder() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    let log = try ActionLog(directory: dir.url, options: ledgerOptions(ring))
    defer { try? log.close() }
    try log.append(contentsOf: (1...Self.count).map(numbered))
    for range in [1...Self.count, 2...2_049, 300...Self.count, 5...9] {
      let result = scanned(log, UInt64(range.lowerBound)...UInt64(range.upperBound))
      #expect(result.error == nil)
      #expect(result.payloads == expected(range), "\(range)")
    }
  }

  @Test func aTamperedEntryInALongScanStopsItThereNamingItsSeqAndKey() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    let log = try ActionLog(directory: dir.url, options: ledgerOptions(ring))
    try log.append(contentsOf: (1...Self.count).map(numbered))
    try log.close()
    // Entry 700: a byte of its ciphertext (the last 48 bytes are the tag and the hash).
    try changeEntry(700, in: dir) { $0![$0!.count - 50] ^= 0x01 }
    let reader = try ActionLog(directory: dir.url, access: .readOnly, options: ledgerOptions(ring))
    defer { try? reader.close() }
    let result = scanned(reader, 1...UInt64(Self.count))
    #expect(result.payloads == expected(1...699))
    #expect(result.error == LogError.decryptionFailed(path: reader.path, seq: 700, keyID: ring.current.id).description)
  }

  @Test func aMissingKeyInALongScanNamesTheFirstEntryItSealed() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let old = EncryptionKey.random()
    let new = EncryptionKey.random()
    let first = try ActionLog(directory: dir.url, options: ledgerOptions(try KeyRing([old])))
    try first.append(contentsOf: (1...600).map(numbered))
    try first.close()
    let second = try ActionLog(directory: dir.url, options: ledgerOptions(try KeyRing([old, new])))
    try second.append(contentsOf: (601...Self.count).map(numbered))
    try second.close()
    // Without the new key: entries 1 … 600, then entry 601 names the new key.
    let shredded = try ActionLog(directory: dir.url, access: .readOnly, options: ledgerOptions(try KeyRing([old])))
    defer { try? shredded.close() }
    let result = scanned(shredded, 1...UInt64(Self.count))
    #expect(result.payloads == expected(1...600))
    #expect(result.error == LogError.keyMissing(path: shredded.path, seq: 601, keyID: new.id).description)
  }

  @Test func aMissingOrMalformedEntryInALongScanIsReportedAfterTheEntriesBeforeIt() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    let log = try ActionLog(directory: dir.url, options: ledgerOptions(ring))
    try log.append(contentsOf: (1...Self.count).map(numbered))
    try log.close()
    try changeEntry(650, in: dir) { $0 = nil }
    try changeEntry(UInt64(Self.count) - 3, in: dir) { $0![0] = 9 }
    let reader = try ActionLog(directory: dir.url, access: .readOnly, options: ledgerOptions(ring))
    defer { try? reader.close() }
    let missing = scanned(reader, 1...UInt64(Self.count))
    #expect(missing.payloads == expected(1...649))
    #expect(
      missing.error
        == LogError.corruptEntry(path: reader.path, seq: 650, reason: "missing: the next entry found is 651").description)
    let malformed = scanned(reader, 651...UInt64(Self.count))
    #expect(malformed.payloads == expected(651...(Self.count - 4)))
    #expect(malformed.error?.contains("entry \(Self.count - 3)") == true)
    #expect(malformed.error?.contains("unknown entry layout version 9") == true)
    // Past the last entry: the first one missing.
    let past = scanned(reader, 700...UInt64(Self.count + 10))
    #expect(past.error?.contains("entry \(Self.count - 3)") == true)
  }

  @Test func anErrorOfTheCallerStopsALongScan() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    let log = try ActionLog(directory: dir.url, options: ledgerOptions(ring))
    defer { try? log.close() }
    try log.append(contentsOf: (1...Self.count).map(numbered))
    struct Enough: Error {}
    var seen: [UInt64] = []
    #expect(throws: Enough.self) {
      try log.scan(in: 1...UInt64(Self.count)) { entry in
        seen.append(entry.seq)
        if entry.seq == 300 { throw Enough() }
      }
    }
    #expect(seen == Array(1...300))
    // The log is still usable: the next scan sees everything.
    #expect(scanned(log, 1...UInt64(Self.count)).payloads == expected(1...Self.count))
  }
}
