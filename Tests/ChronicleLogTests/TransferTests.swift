import Foundation
import LMDB
import Testing

@testable import ChronicleLog

/// Every key and value of a log's databases, read through the LMDB module, to compare logs byte for byte.
struct TransferRawContents: Equatable {
  var entries: [[UInt8]: [UInt8]] = [:]
  var snapshots: [[UInt8]: [UInt8]] = [:]
  var meta: [[UInt8]: [UInt8]] = [:]

  init(_ directory: URL) throws {
    let environment = try Environment(
      path: directory.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 4, flags: [.readOnly]))
    defer { environment.close() }
    func dump(_ name: String) throws -> [[UInt8]: [UInt8]] {
      let db = try environment.openDatabase(named: name)
      return try environment.read { txn in
        try txn.withCursor(on: db) { cursor in
          var pairs: [[UInt8]: [UInt8]] = [:]
          var item = try cursor.first()
          while let (key, value) = item {
            pairs[Array(key)] = Array(value)
            item = try cursor.next()
          }
          return pairs
        }
      }
    }
    entries = try dump("entries")
    snapshots = try dump("snapshots")
    meta = try dump("meta")
  }
}

/// A log with every kind, flag pattern, codec, odd metadata and snapshots with auxiliary data.
func makeVariedLog(at directory: URL, count: Int = 500) throws {
  let log = try ActionLog(
    directory: directory, options: .init(durability: .normal, flushInterval: nil, appID: "ledger ✓"))
  defer { try? log.close() }
  let metadata: [[String: String]] = [
    [:], ["user": "alice"], ["reason": "tab\tnew\nline \"quoted\" \\", "z": "", "ä": "ünïcødé 🚀"],
    ["e\u{301}": "decomposed"],
  ]
  let entries = try (1...count).map { n -> NewEntry in
    if n % 50 == 0 { return NewEntry(kind: .marker, typeName: "marker", codec: .json, payload: []) }
    return try NewEntry(
      kind: EntryKind(rawValue: UInt8(n % 5 + 1))!, flags: EntryFlags(rawValue: UInt8(n % 256)),
      encoding: Sample.make(n),
      typeName: n % 7 == 0 ? "transfer 💸" : "sample", metadata: metadata[n % metadata.count],
      codec: n % 3 == 0 ? .json : .cbor, schemaVersion: UInt32(n % 4 + 1),
      timestamp: 1_700_000_000_000_000 + Int64(n) * 999)
  }
  try log.append(contentsOf: entries)
  try log.writeSnapshot(at: 0, state: [1, 2, 3], codec: .cbor, schemaVersion: 1)
  try log.writeSnapshot(
    at: UInt64(count / 2), state: Array("{\"n\":\(count / 2)}".utf8), codec: .json, schemaVersion: 2,
    auxiliary: [9, 8, 7])
  try log.writeSnapshot(at: UInt64(count), state: [0xA0], codec: .cbor, schemaVersion: 3)
  try log.setSchemaVersion(7)
}

@Suite struct TransferTests {
  @Test func exportThenImportIsByteIdenticalAndVerifies() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let original = dir.child("original")
    try makeVariedLog(at: original)
    let log = try ActionLog(directory: original, access: .readOnly)
    let export = dir.child("export.jsonl")
    var progressCalls = 0
    let written = try log.export(to: export) { done, total in
      progressCalls += 1
      #expect(done <= total)
    }
    try log.close()
    #expect(written.entries == 500)
    #expect(written.snapshots == [0, 250, 500])
    #expect(progressCalls >= 1)
    #expect(!FileManager.default.fileExists(atPath: export.path + ".partial"))
    let attributes = try FileManager.default.attributesOfItem(atPath: export.path)
    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

    let imported = dir.child("imported")
    let report = try ActionLog.importLog(from: export, into: imported)
    #expect(report.entries == 500)
    #expect(report.head == written.head)
    #expect(try TransferRawContents(imported) == TransferRawContents(original))
    let copy = try ActionLog(directory: imported, access: .readOnly)
    #expect(try copy.verify().isValid)
    #expect(try copy.meta() == (try ActionLog(directory: original, access: .readOnly).meta()))
    try copy.close()
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
    #expect(leftovers.isEmpty)
  }

  @Test func theExportIsJSONLinesWithAHeaderEntriesAndSnapshots() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeVariedLog(at: dir.child("log"), count: 60)
    let log = try ActionLog(directory: dir.child("log"), access: .readOnly)
    defer { try? log.close() }
    try log.export(to: dir.child("x.jsonl"))
    let lines = try String(contentsOf: dir.child("x.jsonl"), encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 1 + 60 + 3)
    let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    #expect(objects[0]["chronicleExport"] as? Int == 1)
    #expect(objects[0]["appID"] as? String == "ledger ✓")
    #expect(objects[0]["schemaVersion"] as? Int == 7)
    #expect(objects[0]["entries"] as? Int == 60)
    #expect((objects[0]["anchor"] as? [String: Any])?["seq"] as? Int == 0)
    let entry = objects[7]
    #expect(entry["record"] as? String == "entry")
    #expect(entry["seq"] as? Int == 7)
    #expect(entry["typeName"] as? String == "transfer 💸")
    #expect(entry["payload"] is [String: Any], "the payload rendered as JSON for people")
    let record = try #require(try log.record(at: 7))
    #expect(entry["payloadBase64"] as? String == Data(record.payload).base64EncodedString())
    #expect(entry["hash"] as? String == record.hash.hex)
    #expect(objects.last?["record"] as? String == "snapshot")
    #expect(objects.last?["seq"] as? Int == 60)
  }

  @Test func aTamperedLineIsRefusedNamingItsLineAndSeq() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeVariedLog(at: dir.child("log"), count: 40)
    let log = try ActionLog(directory: dir.child("log"), access: .readOnly)
    try log.export(to: dir.child("x.jsonl"))
    try log.close()
    let lines = try String(contentsOf: dir.child("x.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)

    let tamperings: [(String, (inout [String]) -> Void, String)] = [
      (
        "a changed type name",
        { $0[12] = $0[12].replacingOccurrences(of: #""typeName":"sample""#, with: #""typeName":"simple""#) },
        "line 13 (entry 12)"
      ),
      (
        "a changed timestamp",
        {
          $0[3] = $0[3].replacingOccurrences(
            of: #""timestamp":1700000000002997"#, with: #""timestamp":1700000000002998"#)
        }, "line 4 (entry 3)"
      ),
      ("a removed entry", { $0.remove(at: 20) }, "line 21 (entry 21)"),
      ("swapped entries", { $0.swapAt(5, 6) }, "line 6 (entry 6)"),
      ("a truncated file", { $0.removeLast(8) }, "holds 35"),
      (
        "a changed anchor",
        { $0[0] = $0[0].replacingOccurrences(of: #""seq":0,"hash":"00"#, with: #""seq":0,"hash":"01"#) },
        "line 2 (entry 1)"
      ),
      ("garbage", { $0[9] = "{not json" }, "line 10"),
      (
        "a changed snapshot",
        {
          $0[$0.count - 1] = $0[$0.count - 1].replacingOccurrences(
            of: #""valueBase64":"AQ"#, with: #""valueBase64":"Ag"#)
        }, "snapshot 40"
      ),
    ]
    for (what, change, needle) in tamperings {
      var copy = lines
      change(&copy)
      #expect(copy != lines, "the tampering '\(what)' changed something")
      let file = dir.child("tampered.jsonl")
      try? FileManager.default.removeItem(at: file)
      try (copy.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
      let destination = dir.child("imported")
      let error = #expect(throws: LogError.self, "\(what) is refused") {
        try ActionLog.importLog(from: file, into: destination)
      }
      let message = error.map { "\($0)" } ?? ""
      #expect(message.contains(file.path), "\(what): \(message)")
      #expect(message.contains(needle), "\(what): '\(needle)' in \(message)")
      #expect(!FileManager.default.fileExists(atPath: destination.path), "\(what): no log was left behind")
      let hidden = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
      #expect(hidden.isEmpty, "\(what): no temporary directory was left behind")
      #expect(throws: LogError.self) { try ActionLog.checkExport(at: file) }
    }
  }

  @Test func destinationsAreNeverOverwritten() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeVariedLog(at: dir.child("log"), count: 10)
    let log = try ActionLog(directory: dir.child("log"), access: .readOnly)
    defer { try? log.close() }
    let export = dir.child("x.jsonl")
    try Data("keep me".utf8).write(to: export)
    #expect(throws: LogError.self) { try log.export(to: export) }
    #expect(try String(contentsOf: export, encoding: .utf8) == "keep me")
    try FileManager.default.removeItem(at: export)
    try log.export(to: export)

    let nonEmpty = dir.child("busy")
    try FileManager.default.createDirectory(at: nonEmpty, withIntermediateDirectories: true)
    try Data("x".utf8).write(to: nonEmpty.appendingPathComponent("file"))
    #expect(throws: LogError.self) { try ActionLog.importLog(from: export, into: nonEmpty) }
    #expect(throws: LogError.self) { try ActionLog.importLog(from: export, into: export) }

    let empty = dir.child("empty")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    try ActionLog.importLog(from: export, into: empty)
    #expect(try TransferRawContents(empty) == TransferRawContents(dir.child("log")))
  }

  @Test func anExportReflectsOneConsistentMomentWhileAWriterAppends() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let writer = try ActionLog(directory: dir.child("log"), options: .init(flushInterval: nil))
    try writer.append(contentsOf: (0..<2000).map { try NewEntry(encoding: $0, typeName: "n", codec: .cbor) })
    let reader = try ActionLog(directory: dir.child("log"), access: .readOnly)
    let export = dir.child("x.jsonl")
    try reader.export(to: export) { _, _ in
      _ = try? writer.append(try! NewEntry(encoding: 0, typeName: "late", codec: .json))
    }
    try reader.close()
    try writer.close()
    let report = try ActionLog.checkExport(at: export)
    #expect(report.entries == 2000)
    #expect(report.range == 1...2000)
  }

  @Test func jsonPayloadsAreCheckedStrictlyBeforeTheyAreEmbeddedAsStored() throws {
    let valid = [
      #"{}"#, #"[]"#, #"{"a":[1,-2.5e+3,0.25,true,false,null,"x\u00e9\n\"\\/"]}"#, #" {"set" : {"_0" : 5}} "#, "0",
      #""só""#, "-0", "1E5",
    ]
    let invalid = [
      "", "{", #"{"a"}"#, #"{"a":1,}"#, "[1,]", "01", "1.", ".5", "+1", "tru", "nul", #""\x""#, #""\u12g4""#,
      "\"tab\t\"", "{} {}", "NaN", String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
    ]
    for text in valid { #expect(JSONCheck.isValid(Array(text.utf8)), "\(text)") }
    for text in invalid { #expect(!JSONCheck.isValid(Array(text.utf8)), "\(text)") }
    let stored = Array(#"{"b":1,"a":"x/y"}"#.utf8)
    #expect(try PayloadText.compactJSON(stored, codec: .json) == #"{"b":1,"a":"x/y"}"#, "kept as stored")
    let pretty = Array("{\n  \"a\" : 1\n}".utf8)
    #expect(try PayloadText.compactJSON(pretty, codec: .json) == #"{"a":1}"#, "multi-line JSON is re-rendered")
    let cbor = try PayloadCodec.cbor.encode(["set": ["_0": 5]])
    #expect(try PayloadText.compactJSON(cbor, codec: .cbor) == #"{"set":{"_0":5}}"#)
    #expect(throws: (any Error).self) { try PayloadText.compactJSON(Array("{oops".utf8), codec: .json) }
  }

  @Test func timesRoundTripThroughISOText() {
    for micros: Int64 in [0, 1, 1_767_225_600_000_000, 1_767_225_601_500_000, -1, -86_400_000_001, 951_782_400_123_456]
    {
      let text = ISOTime.string(micros: micros)
      #expect(ISOTime.parse(text) == micros, "\(text)")
    }
    #expect(ISOTime.string(micros: 951_782_400_123_456) == "2000-02-29T00:00:00.123456Z")
    #expect(ISOTime.parse("2026-01-01") == 1_767_225_600_000_000)
    #expect(ISOTime.parse("2026-01-01T02:00+02:00") == 1_767_225_600_000_000)
    #expect(ISOTime.parse("2026-01-01 00:00:01.5") == 1_767_225_601_500_000)
    #expect(ISOTime.parse("yesterday") == nil)
    #expect(ISOTime.parse("2026-13-01") == nil)
  }
}
