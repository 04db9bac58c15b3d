import ChronicleLog
import FixtureApp
import Foundation
import ChronicleTestTools
import Testing

// MARK: - Reading the fixtures

/// Expects `record` to hold what `line` of a fixture's `expected.jsonl` records, field by field,
/// each failure naming the entry's seq and the field.
func expectEntry(_ record: StoredEntry, matches line: FixtureEntryLine, sourceLocation: SourceLocation = #_sourceLocation) {
  let seq = line.seq
  #expect(record.kind.description == line.kind, "entry \(seq): kind", sourceLocation: sourceLocation)
  #expect(record.flags.rawValue == line.flags, "entry \(seq): flags", sourceLocation: sourceLocation)
  #expect(record.codec.description == line.codec, "entry \(seq): codec", sourceLocation: sourceLocation)
  #expect(record.schemaVersion == line.schemaVersion, "entry \(seq): schema version", sourceLocation: sourceLocation)
  #expect(record.timestamp == line.timestamp, "entry \(seq): timestamp", sourceLocation: sourceLocation)
  #expect(record.typeName == line.typeName, "entry \(seq): type name", sourceLocation: sourceLocation)
  #expect(record.metadata == line.metadata, "entry \(seq): metadata", sourceLocation: sourceLocation)
  #expect(fixtureHex(record.payload) == line.payloadHex, "entry \(seq): payload bytes", sourceLocation: sourceLocation)
  #expect(fixtureHex(record.hash) == line.hashHex, "entry \(seq): hash", sourceLocation: sourceLocation)
}

/// What a fixture's `expected.jsonl` records.
struct FixtureExpectations {
  var entries: [FixtureEntryLine] = []
  var snapshots: [FixtureSnapshotLine] = []
  /// The stored checkpoints, the proofs and the tree's line (fixtures with a Merkle tree).
  var checkpoints: [FixtureCheckpointLine] = []
  var proofs: [FixtureProofLine] = []
  var tree: FixtureTreeLine?
  var head: FixtureHeadLine

  /// Parses `expected.jsonl` in the fixture directory `directory`.
  init(directory: URL) throws {
    struct Shape: Decodable {
      var seq: UInt64?
      var snapshot: UInt64?
      var checkpoint: UInt64?
      var proof: String?
      var tree: UInt64?
      var head: String?
    }
    let text = try String(contentsOf: directory.appendingPathComponent("expected.jsonl"), encoding: .utf8)
    let decoder = JSONDecoder()
    var head: FixtureHeadLine?
    for (number, line) in text.split(separator: "\n").enumerated() {
      let data = Data(line.utf8)
      let shape = try decoder.decode(Shape.self, from: data)
      if shape.proof != nil {
        proofs.append(try decoder.decode(FixtureProofLine.self, from: data))
      } else if shape.seq != nil {
        entries.append(try decoder.decode(FixtureEntryLine.self, from: data))
      } else if shape.checkpoint != nil {
        checkpoints.append(try decoder.decode(FixtureCheckpointLine.self, from: data))
      } else if shape.tree != nil {
        tree = try decoder.decode(FixtureTreeLine.self, from: data)
      } else if shape.snapshot != nil {
        snapshots.append(try decoder.decode(FixtureSnapshotLine.self, from: data))
      } else if shape.head != nil {
        head = try decoder.decode(FixtureHeadLine.self, from: data)
      } else {
        throw FixtureFileError(
          description: "expected.jsonl line \(number + 1) is none of entry, snapshot, checkpoint, proof, tree or head")
      }
    }
    guard let head else { throw FixtureFileError(description: "expected.jsonl has no head line") }
    self.head = head
  }
}

/// A malformed `expected.jsonl`.
struct FixtureFileError: Error, CustomStringConvertible {
  var description: String
}

/// The bytes of lower-case or upper-case hexadecimal `hex` (an odd last digit is ignored).
func fixtureBytes(hex: String) -> [UInt8] {
  let digits = Array(hex.utf8)
  return stride(from: 0, to: digits.count - 1, by: 2).map { index in
    UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) ?? 0
  }
}

// MARK: - Tests

/// The committed logs of earlier format versions must stay readable, byte for byte.
@Suite struct FixtureTests {
  @Test func v1CounterReadsBackByteForByte() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory("v1-counter"))
    let copy = try Fixtures.copy("v1-counter", into: temporary)
    let log = try ActionLog(directory: copy, access: .readOnly)
    defer { try? log.close() }

    let report = try log.verify()
    #expect(report.isValid, "verify() found: \(report.problems)")
    #expect(report.entriesChecked == expected.entries.count)
    #expect(report.snapshotsChecked == expected.snapshots.count)
    #expect(report.range == 1...UInt64(expected.entries.count))
    #expect(fixtureHex(report.head) == expected.head.head, "verify()'s head")
    #expect(fixtureHex(try log.head().hash) == expected.head.head, "head()")
    #expect(try log.head().seq == UInt64(expected.head.count))
    #expect(try log.count() == expected.head.count)

    let meta = try log.meta()
    #expect(meta.formatVersion == expected.head.formatVersion)
    #expect(meta.formatVersion == 1)
    #expect(meta.appID == expected.head.appID)
    #expect(meta.schemaVersion == expected.head.schemaVersion)
    #expect(meta.created == expected.head.created)
    #expect(meta.anchor == .genesis)

    var walked: [StoredEntry] = []
    try log.forEach { walked.append($0) }
    #expect(walked.map(\.seq) == expected.entries.map(\.seq), "forEach visits every seq in order")
    for (index, line) in expected.entries.enumerated() {
      let seq = line.seq
      let record = try #require(try log.record(at: seq), "entry \(seq) is missing")
      #expect(record.seq == seq, "entry \(seq): seq")
      expectEntry(record, matches: line)
      if index < walked.count { #expect(walked[index] == record, "entry \(seq): forEach and record(at:) differ") }
    }
    #expect(try log.record(at: UInt64(expected.entries.count) + 1) == nil)

    #expect(try log.snapshots().map(\.seq) == expected.snapshots.map(\.snapshot))
    for line in expected.snapshots {
      let seq = line.snapshot
      let snapshot = try #require(try log.snapshot(at: seq), "snapshot \(seq) is missing")
      #expect(snapshot.seq == seq, "snapshot \(seq): seq")
      #expect(snapshot.timestamp == line.timestamp, "snapshot \(seq): timestamp")
      #expect(snapshot.codec.description == line.codec, "snapshot \(seq): codec")
      #expect(snapshot.schemaVersion == line.schemaVersion, "snapshot \(seq): schema version")
      #expect(fixtureHex(snapshot.state) == line.stateHex, "snapshot \(seq): state bytes")
      #expect(fixtureHex(snapshot.chainHash) == line.chainHashHex, "snapshot \(seq): chain hash")
      #expect(fixtureHex(snapshot.auxiliary) == line.auxiliaryHex, "snapshot \(seq): auxiliary bytes")
    }
    #expect(try log.latestSnapshot().snapshot?.seq == expected.snapshots.last?.snapshot)

    // Reading never touched the committed files.
    let committed = try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory("v1-counter").path)
    #expect(committed.sorted() == ["data.mdb", "expected.jsonl"])
  }

  @Test func v1CounterFoldsToTheRecordedCount() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory("v1-counter"))
    let log = try ActionLog(directory: try Fixtures.copy("v1-counter", into: temporary), access: .readOnly)
    defer { try? log.close() }

    var state = CounterState()
    var statesAtSnapshots: [UInt64: CounterState] = [:]
    let snapshotSeqs = Set(expected.snapshots.map(\.snapshot))
    var kinds: Set<EntryKind> = []
    var codecs: Set<PayloadCodec> = []
    try log.forEach { record in
      let seq = record.seq
      kinds.insert(record.kind)
      codecs.insert(record.codec)
      switch record.kind {
      case .action:
        let action = try record.codec.decode(CounterAction.self, from: record.payload)
        #expect(record.typeName == action.typeName, "entry \(seq): type name of \(action)")
        state.apply(action)
      case .marker:
        let marker = try record.codec.decode(FixtureMarker.self, from: record.payload)
        #expect(record.typeName == "marker", "entry \(seq): type name of marker")
        #expect(!marker.label.isEmpty, "entry \(seq): marker label")
      default:
        Issue.record("entry \(seq): unexpected kind \(record.kind) in the counter fixture")
      }
      if snapshotSeqs.contains(seq) { statesAtSnapshots[seq] = state }
    }
    #expect(state.count == expected.head.finalCount)
    #expect(kinds == [.action, .marker])
    #expect(codecs == [.json, .cbor])

    for line in expected.snapshots {
      let seq = line.snapshot
      let snapshot = try #require(try log.snapshot(at: seq), "snapshot \(seq) is missing")
      let stored = try snapshot.codec.decode(CounterState.self, from: snapshot.state)
      #expect(stored == statesAtSnapshots[seq], "snapshot \(seq): the stored state differs from the fold")
      let record = try #require(try log.record(at: seq), "entry \(seq) is missing")
      #expect(snapshot.codec == record.codec, "snapshot \(seq): codec differs from its entry's")
    }
  }

  /// The codecs are part of the format: today's encoders must write the fixture's payloads byte for byte.
  @Test func v1CounterPayloadsReencodeIdentically() throws {
    let expected = try FixtureExpectations(directory: Fixtures.directory("v1-counter"))
    var state = CounterState()
    let snapshots = Dictionary(uniqueKeysWithValues: expected.snapshots.map { ($0.snapshot, $0) })
    for line in expected.entries {
      let seq = line.seq
      let codec = try #require(PayloadCodec(name: line.codec), "entry \(seq): codec \(line.codec)")
      let payload = fixtureBytes(hex: line.payloadHex)
      let reencoded: [UInt8]
      if line.kind == EntryKind.marker.description {
        reencoded = try codec.encode(try codec.decode(FixtureMarker.self, from: payload))
      } else {
        let action = try codec.decode(CounterAction.self, from: payload)
        state.apply(action)
        reencoded = try codec.encode(action)
      }
      #expect(fixtureHex(reencoded) == line.payloadHex, "entry \(seq): the \(codec) encoder writes different bytes")
      if let snapshot = snapshots[seq] {
        let snapshotCodec = try #require(PayloadCodec(name: snapshot.codec))
        #expect(
          fixtureHex(try snapshotCodec.encode(state)) == snapshot.stateHex,
          "snapshot \(seq): the \(snapshotCodec) encoder writes different bytes")
      }
    }
  }

  @Test func v1CounterStillExtends() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory("v1-counter"))
    let copy = try Fixtures.copy("v1-counter", into: temporary)
    let count = UInt64(expected.entries.count)

    let writer = try ActionLog(
      directory: copy, access: .readWrite,
      options: .init(durability: .full, flushInterval: nil, appID: expected.head.appID))
    #expect(fixtureHex(try writer.head().hash) == expected.head.head, "the writer's head")
    let last = try #require(expected.entries.last)
    let seq = try writer.append(
      try NewEntry(
        encoding: CounterAction.set(42), typeName: "set", metadata: ["user": "a later version"], codec: .cbor,
        timestamp: last.timestamp + 1_500_000))
    #expect(seq == count + 1)
    try writer.writeSnapshot(
      at: seq, state: try PayloadCodec.cbor.encode(CounterState(count: 42)), codec: .cbor, schemaVersion: 1)
    let report = try writer.verify()
    #expect(report.isValid, "verify() after appending found: \(report.problems)")
    #expect(report.entriesChecked == expected.entries.count + 1)
    #expect(report.snapshotsChecked == expected.snapshots.count + 1)
    try writer.close()

    let reader = try ActionLog(directory: copy, access: .readOnly)
    defer { try? reader.close() }
    let reread = try reader.verify()
    #expect(reread.isValid, "verify() after reopening found: \(reread.problems)")
    #expect(reread.head == report.head)
    let old = try #require(try reader.record(at: count), "entry \(count) is missing")
    #expect(fixtureHex(old.hash) == last.hashHex, "entry \(count): hash changed by the append")
    let new = try #require(try reader.record(at: seq), "entry \(seq) is missing")
    #expect(try PayloadCodec.cbor.decode(CounterAction.self, from: new.payload) == .set(42), "entry \(seq): payload")
  }
}
