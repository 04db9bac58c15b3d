import Crypto
import FixtureApp
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

// MARK: - Writing what the rules forbid

/// Replaces entry `seq` of the closed log at `directory` with `entry`'s bytes, its chain hash
/// computed from the stored hash before it (the entries after it then no longer follow): how a
/// writer that breaks the rules of docs/log-format.md would have written it.
func overwriteEntry(_ seq: UInt64, with entry: NewEntry, in directory: URL) throws {
  let environment = try Environment(path: directory.path, configuration: .init(mapSize: 1 << 24, maxDatabases: 8))
  defer { environment.close() }
  let entries = try environment.openDatabase(named: "entries")
  try environment.write { txn in
    var previous = Chain.genesis
    if seq > 1, let value = try txn.get(forKey: sequenceKey(seq - 1), in: entries) { previous = Array(value.suffix(32)) }
    var writer = ByteWriter()
    try EntryFormat.encodeBody(entry, timestamp: entry.timestamp ?? 0, into: &writer)
    let hash = writer.bytes.withUnsafeBytes { Chain.hash(previous: previous, seq: seq, body: $0) }
    try txn.put(writer.bytes + hash, forKey: sequenceKey(seq), in: entries)
  }
}

/// Changes the stored value of `key` in database `name` of the closed log at `directory` with `change`.
func patchValue(_ key: [UInt8], in name: String, of directory: URL, _ change: (inout [UInt8]) -> Void) throws {
  let environment = try Environment(path: directory.path, configuration: .init(mapSize: 1 << 24, maxDatabases: 8))
  defer { environment.close() }
  let db = try environment.openDatabase(named: name)
  try environment.write { txn in
    var value = try #require(try txn.get(forKey: key, in: db), "no value under \(key) in \(name)")
    change(&value)
    try txn.put(value, forKey: key, in: db)
  }
}

/// The 8-byte big-endian key of `seq`.
func sequenceKey(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

// MARK: - Tests

/// The rules docs/log-format.md settles for readers and writers (§3, §4, §6), pinned to what the code does.
@Suite struct FormatRulesTests {
  private func writeThree(in directory: URL) throws {
    let log = try ActionLog(directory: directory, options: .init(flushInterval: nil))
    for n in 1...3 {
      try log.append(try NewEntry(encoding: CounterAction.set(n), typeName: "set", codec: n == 2 ? .json : .cbor))
    }
    try log.close()
  }

  /// An unknown layout, kind or codec byte makes the entry unreadable, by its seq: never skipped,
  /// never guessed at. The entries around it still read.
  @Test(arguments: [(0, 3, "unknown entry layout version 3"), (1, 9, "unknown kind 9"), (2, 7, "unknown codec 7")])
  func unknownEnumeratedBytesMakeTheEntryUnreadable(offset: Int, byte: UInt8, message: String) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try writeThree(in: dir.url)
    try patchValue(sequenceKey(2), in: "entries", of: dir.url) { $0[offset] = byte }

    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    do {
      _ = try log.record(at: 2)
      Issue.record("entry 2 with \(message) was read")
    } catch let error as LogError {
      guard case .corruptEntry(_, let seq, let reason) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(seq == 2)
      #expect(reason.contains(message), "\(reason)")
    }
    #expect(try log.record(at: 1) != nil)
    #expect(try log.record(at: 3) != nil)
    let report = try log.verify()
    #expect(report.firstBadSeq == 2)
    #expect(report.problems.map(\.description).joined().contains(message), "\(report.problems)")
  }

  /// Reserved flag bits are stored, hashed and handed back, and mean nothing to readers.
  @Test func reservedFlagBitsAreKeptHashedAndIgnored() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(flushInterval: nil))
    try log.append(
      try NewEntry(flags: EntryFlags(rawValue: 0xF2), encoding: CounterAction.increment, typeName: "increment", codec: .cbor))
    try log.append(try NewEntry(encoding: CounterAction.increment, typeName: "increment", codec: .cbor))
    let record = try #require(try log.record(at: 1))
    #expect(record.flags.rawValue == 0xF2)
    #expect(record.flags.names == ["notUndoable"])
    #expect(try log.verify().isValid)
    try log.close()

    // One reserved bit changed: the entry's hash no longer matches.
    try patchValue(sequenceKey(1), in: "entries", of: dir.url) { $0[3] ^= 0x80 }
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? reader.close() }
    #expect(try reader.verify().firstBadSeq == 1)
  }

  /// A snapshot's reserved bytes are written as zero and ignored by readers (its checksum covers them).
  @Test func snapshotReservedBytesAreIgnored() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try writeThree(in: dir.url)
    let writer = try ActionLog(directory: dir.url, options: .init(flushInterval: nil))
    let written = try writer.writeSnapshot(
      at: 3, state: try PayloadCodec.cbor.encode(CounterState(count: 3)), codec: .cbor, schemaVersion: 1)
    try writer.close()
    try patchValue(sequenceKey(3), in: "snapshots", of: dir.url) { value in
      #expect(value[2] == 0 && value[3] == 0, "reserved bytes are written as zero")
      value[2] = 0xAB
      value[3] = 0xCD
      value.replaceSubrange((value.count - 32)..., with: Array(SHA256.hash(data: value.dropLast(32))))
    }
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    #expect(try log.snapshot(at: 3) == written)
    #expect(try log.verify().isValid)
  }

  /// A payload is exactly one CBOR data item or one JSON text: bytes after it make it undecodable.
  @Test func aPayloadIsExactlyOneItem() throws {
    let cbor = try PayloadCodec.cbor.encode(CounterAction.set(5))
    #expect(try PayloadCodec.cbor.decode(CounterAction.self, from: cbor) == .set(5))
    for bad in [cbor + [0x00], cbor + cbor] {
      #expect(throws: (any Error).self) { try PayloadCodec.cbor.decode(CounterAction.self, from: bad) }
      #expect(throws: (any Error).self) { try PayloadCodec.cbor.renderJSON(bad) }
    }
    let json = try PayloadCodec.json.encode(CounterAction.set(5))
    #expect(String(decoding: json, as: UTF8.self) == #"{"set":{"_0":5}}"#, "no whitespace is written")
    for bad in [json + Array("x".utf8), json + json] {
      #expect(throws: (any Error).self) { try PayloadCodec.json.decode(CounterAction.self, from: bad) }
      #expect(throws: (any Error).self) { try PayloadCodec.json.renderJSON(bad) }
    }
    // A JSON text may have whitespace around its value (RFC 8259); Chronicle writes none.
    let spaced = Array(" \n".utf8) + json + Array("\n".utf8)
    #expect(try PayloadCodec.json.decode(CounterAction.self, from: spaced) == .set(5))
  }

  /// JSON object members are sorted by the bytes of their UTF-8 keys (code point order, no
  /// normalization); CBOR maps keep the encoding order (a struct's declaration order).
  @Test func mapKeyOrderOfEachCodec() throws {
    // ("e\u{301}" and "\u{E9}" are one key to a Swift `Dictionary`: canonically equivalent.)
    let keys = ["b", "a10", "a2", "B", "_x", "a-", "10", "9", "e\u{301}", "f", "\u{E9}x", "\u{FF5E}", "\u{1F600}"]
    let dictionary = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($0.element, $0.offset) })
    let text = String(decoding: try PayloadCodec.json.encode(dictionary), as: UTF8.self)
    let sorted = keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    #expect(sorted == ["10", "9", "B", "_x", "a-", "a10", "a2", "b", "e\u{301}", "f", "\u{E9}x", "\u{FF5E}", "\u{1F600}"])
    let expected = "{" + sorted.map { "\"\($0)\":\(dictionary[$0]!)" }.joined(separator: ",") + "}"
    #expect(text == expected)

    let stacks = FixtureUndoStacks(undo: [1], redo: [])
    #expect(String(decoding: try PayloadCodec.json.encode(stacks), as: UTF8.self) == #"{"redo":[],"undo":[1]}"#)
    #expect(
      try PayloadCodec.cbor.encode(stacks) == [0xA2, 0x64] + Array("undo".utf8) + [0x81, 0x01, 0x64] + Array("redo".utf8) + [0x80])
  }

  /// A restore, undo or redo entry names an earlier entry (or 0): `append` refuses anything else,
  /// and writes nothing of the batch.
  @Test func jumpTargetsPrecedeTheirEntry() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(flushInterval: nil))
    defer { try? log.close() }
    func jump(_ kind: EntryKind, _ target: UInt64, _ codec: PayloadCodec = .cbor) throws -> NewEntry {
      try NewEntry(kind: kind, encoding: FixtureJumpTarget(target: target), typeName: kind.description, codec: codec)
    }
    try log.append(try NewEntry(encoding: CounterAction.increment, typeName: "increment", codec: .json))
    try log.append(contentsOf: [try jump(.undo, 0), try jump(.redo, 1, .json), try jump(.restore, 3)])
    #expect(try log.count() == 4)

    let refused: [(NewEntry, String)] = [
      (try jump(.restore, 5), "the restore entry at 5 names target 5, which is not before it"),
      (try jump(.undo, 9, .json), "the undo entry at 5 names target 9, which is not before it"),
      (
        NewEntry(kind: .redo, typeName: "redo", codec: .json, payload: Array(#"{"to":1}"#.utf8)),
        "the redo entry at 5 has no {\"target\": seq} payload"
      ),
    ]
    for (entry, message) in refused {
      do {
        try log.append(entry)
        Issue.record("\(message): appended")
      } catch LogError.invalidEntry(let reason) {
        #expect(reason.hasPrefix(message), "\(reason)")
      }
      #expect(try log.count() == 4, "nothing was written")
    }
    // In a batch, one bad entry (the restore at 7 naming 7) fails all of it.
    #expect(throws: LogError.self) {
      try log.append(contentsOf: [
        try jump(.undo, 0), try NewEntry(encoding: CounterAction.reset, typeName: "reset", codec: .json),
        try jump(.restore, 7),
      ])
    }
    #expect(try log.count() == 4, "nothing of the batch was written")
    #expect(try log.verify().isValid)
  }

  /// Timestamps are the app's when it gives them (in any order), else the writer's clock at the
  /// append, one time for a whole batch; a snapshot's is always the writer's clock.
  @Test func timestampsComeFromTheAppOrTheWritersClock() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(flushInterval: nil))
    defer { try? log.close() }
    let before = Date().microsecondsSince1970
    try log.append(contentsOf: (0..<3).map { _ in NewEntry(typeName: "t", codec: .json, payload: Array("1".utf8)) })
    try log.append(NewEntry(typeName: "early", codec: .json, payload: Array("2".utf8), timestamp: 1_000))
    let snapshot = try log.writeSnapshot(at: 4, state: Array("0".utf8), codec: .json, schemaVersion: 1)
    let after = Date().microsecondsSince1970
    let stamps = try log.records(in: 1...4).map(\.timestamp)
    #expect(Set(stamps.prefix(3)).count == 1, "one time for the batch")
    #expect((before...after).contains(stamps[0]))
    #expect(stamps[3] == 1_000, "the app's time, earlier than the entry before it, is kept")
    #expect((before...after).contains(snapshot.timestamp))
  }
}
