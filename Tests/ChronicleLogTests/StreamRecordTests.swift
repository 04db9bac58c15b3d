import ChronicleLog
import ChronicleTestTools
import Foundation
import Testing

/// Copies of a shared stream: records encoded by one copy and appended verbatim by others end in
/// the same head and Merkle root, and a record out of place or with a wrong hash is refused.
@Suite struct StreamRecordTests {
  let stream = SharedStream("ledger")

  func copy(_ directory: TemporaryDirectory, _ name: String, ring: KeyRing? = nil) throws -> ActionLog {
    try ActionLog(
      directory: directory.child(name), options: .init(appID: stream.name, keyRing: ring, logID: stream.id))
  }

  func entries(_ count: Int, from first: Int = 0) -> [NewEntry] {
    (first..<(first + count)).map { index in
      NewEntry(
        typeName: "deposit", metadata: ["chronicle.device": "a"], codec: .json,
        payload: Array(#"{"cents":\#(index)}"#.utf8), timestamp: 1_700_000_000_000_000 + Int64(index))
    }
  }

  @Test(arguments: [false, true]) func copiesThatAppendTheSameRecordsHoldTheSameChainAndTree(encrypted: Bool) throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let ring = encrypted ? try KeyRing([.random()]) : nil
    let a = try copy(directory, "a", ring: ring)
    let b = try copy(directory, "b", ring: ring)
    defer {
      try? a.close()
      try? b.close()
    }
    #expect(try a.logID() == stream.id)
    #expect(try a.origin() == stream.origin)
    // Device a encodes, the server orders, both append the same bytes.
    let first = try a.records(encoding: entries(5), after: a.head(), device: "a")
    #expect(first.map(\.seq) == [1, 2, 3, 4, 5])
    try a.append(records: first)
    try b.append(records: first)
    // Device b encodes the next ones after the head both hold.
    let second = try b.records(encoding: entries(3, from: 5), after: b.head(), device: "b")
    try b.append(records: second)
    try a.append(records: second)
    #expect(try a.head() == b.head())
    #expect(try a.treeRoot(size: 8) == b.treeRoot(size: 8))
    #expect(try a.verify().isValid)
    #expect(try b.verify().isValid)
    // Each copy reads the other's entries (an encrypted one with the stream's ring).
    #expect(try a.record(at: 7)?.payload == Array(#"{"cents":6}"#.utf8))
    #expect(try b.record(at: 2)?.timestamp == 1_700_000_000_000_001)
  }

  @Test func aRecordOutOfPlaceOrWithAWrongHashIsRefusedAndNothingWritten() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let a = try copy(directory, "a")
    let b = try copy(directory, "b")
    defer {
      try? a.close()
      try? b.close()
    }
    let records = try a.records(encoding: entries(3), after: a.head(), device: "a")
    // A gap: the records start at 2.
    #expect {
      try b.append(records: Array(records.dropFirst()))
    } throws: { "\($0)".contains("record 2 does not continue the log at entry 1") }
    // A changed byte: the hash no longer matches.
    var changed = records
    changed[1].body[changed[1].body.count - 2] ^= 1
    #expect {
      try b.append(records: changed)
    } throws: { "\($0)".contains("record 2 does not carry the chain hash of its bytes") }
    // Bytes that are no entry.
    var garbage = records
    garbage[0].body = [9, 9, 9]
    #expect(throws: (any Error).self) { try b.append(records: garbage) }
    #expect(try b.head().seq == 0)
    try b.append(records: records)
    #expect(try b.head() == ChainAnchor(seq: 3, hash: records[2].hash))
  }
}
