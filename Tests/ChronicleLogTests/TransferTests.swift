import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@testable import ChronicleLog

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
    let kind = EntryKind(rawValue: UInt8(n % 5 + 1))!
    let codec: PayloadCodec = n % 3 == 0 ? .json : .cbor
    // Restore, undo and redo entries name an earlier entry (docs/log-format.md §3).
    let isJump = kind == .restore || kind == .undo || kind == .redo
    return NewEntry(
      kind: kind, flags: EntryFlags(rawValue: UInt8(n % 256)),
      typeName: n % 7 == 0 ? "transfer 💸" : "sample", metadata: metadata[n % metadata.count],
      codec: codec, schemaVersion: UInt32(n % 4 + 1),
      payload: isJump ? try codec.encode(["target": UInt64(n / 2)]) : try codec.encode(Sample.make(n)),
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
    #expect(try RawDump(imported) == RawDump(original))
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
    #expect(objects[0]["chronicleExport"] as? Int == ActionLog.exportFormatVersion)
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
    #expect(try RawDump(empty) == RawDump(dir.child("log")))
  }

  /// `NAME.partial` is created exclusively and never through a link: a symbolic link, a hard
  /// link, another file or a file being written there is refused and left as it was; only an
  /// unfinished export a killed process left (empty, or the start of an export) is replaced.
  @Test func thePartialFileIsNeverAVictim() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeVariedLog(at: dir.child("log"), count: 20)
    let victim = dir.child("victim.txt")
    let precious = "precious"
    func expectRefused(_ what: String, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
      let error = #expect(throws: LogError.self, "\(what) is refused", sourceLocation: sourceLocation) { try body() }
      guard case .destinationExists(let path, let reason)? = error else {
        Issue.record("\(what): \(String(describing: error))", sourceLocation: sourceLocation)
        return
      }
      #expect(path.hasSuffix(".partial"), "\(what): names the partial file: \(path)", sourceLocation: sourceLocation)
      #expect(!reason.isEmpty, sourceLocation: sourceLocation)
      #expect(
        (try? String(contentsOf: victim, encoding: .utf8)) == precious, "\(what): the victim is untouched",
        sourceLocation: sourceLocation)
    }
    try Data(precious.utf8).write(to: victim)
    let log = try ActionLog(directory: dir.child("log"), access: .readOnly)
    let export = dir.child("x.jsonl")
    let partial = dir.child("x.jsonl.partial")

    try FileManager.default.createSymbolicLink(at: partial, withDestinationURL: victim)
    expectRefused("a symbolic link") { try log.export(to: export) }
    #expect(!FileManager.default.fileExists(atPath: export.path), "no export appeared")
    try FileManager.default.removeItem(at: partial)

    try FileManager.default.linkItem(at: victim, to: partial)
    expectRefused("a hard link") { try log.export(to: export) }
    try FileManager.default.removeItem(at: partial)

    try Data("notes of the user".utf8).write(to: partial)
    expectRefused("another file") { try log.export(to: export) }
    #expect(try String(contentsOf: partial, encoding: .utf8) == "notes of the user")
    try FileManager.default.removeItem(at: partial)

    try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: false)
    expectRefused("a directory") { try log.export(to: export) }
    try FileManager.default.removeItem(at: partial)

    // A file another export is writing: it holds the lock.
    try Data(#"{"chronicleExport":1,"#.utf8).write(to: partial)
    let holder = open(partial.path, O_RDONLY)
    #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
    expectRefused("a file being written") { try log.export(to: export) }
    close(holder)

    // The same file once its writer is gone: a stale leftover, replaced.
    try log.export(to: export)
    #expect(try ActionLog.checkExport(at: export).entries == 20)
    #expect(!FileManager.default.fileExists(atPath: partial.path))
    try FileManager.default.removeItem(at: export)
    try Data().write(to: partial)
    try log.export(to: export)
    #expect(!FileManager.default.fileExists(atPath: partial.path), "an empty leftover is replaced too")
    try log.close()

    // The archive of a compaction goes through the same door.
    try makeVariedLog(at: dir.child("log2"), count: 120)
    let archive = dir.child("archive.jsonl")
    try FileManager.default.createSymbolicLink(at: dir.child("archive.jsonl.partial"), withDestinationURL: victim)
    expectRefused("a symbolic link in place of the archive's partial file") {
      try ActionLog.compact(directory: dir.child("log2"), before: 100, disposal: .archive(archive))
    }
    #expect(!FileManager.default.fileExists(atPath: archive.path))
    let after = try ActionLog(directory: dir.child("log2"), access: .readOnly)
    #expect(try after.meta().anchor.seq == 0, "nothing was cut")
    try after.close()
  }

  /// A streamed export throws `LogError` for the log's problems and the writer's own error unchanged.
  @Test func aStreamedExportPassesTheWritersErrorThrough() throws {
    struct DiskGone: Error {}
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeVariedLog(at: dir.child("log"), count: 20)
    let log = try ActionLog(directory: dir.child("log"), access: .readOnly)
    defer { try? log.close() }
    #expect(throws: DiskGone.self) { try log.export { _ in throw DiskGone() } }
    var bytes = 0
    let report = try log.export { bytes += $0.count }
    #expect(report.bytes == bytes && report.entries == 20)
  }

  /// An export whose anchor is the largest sequence number is refused (it used to crash import).
  @Test func anAnchorOfTheLargestSequenceNumberIsRefused() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeVariedLog(at: dir.child("log"), count: 20)
    let log = try ActionLog(directory: dir.child("log"), access: .readOnly)
    let export = dir.child("x.jsonl")
    try log.export(to: export, through: 0)
    try log.close()
    let text = try String(contentsOf: export, encoding: .utf8)
    let changed = text.replacingOccurrences(of: #""anchor":{"seq":0"#, with: #""anchor":{"seq":18446744073709551615"#)
      .replacingOccurrences(of: #""head":{"seq":0"#, with: #""head":{"seq":18446744073709551615"#)
    #expect(changed != text)
    try changed.write(to: export, atomically: true, encoding: .utf8)
    let destination = dir.child("imported")
    let error = #expect(throws: LogError.self) { try ActionLog.importLog(from: export, into: destination) }
    #expect("\(error.map { "\($0)" } ?? "")".contains("line 1: the anchor's sequence number 18446744073709551615"))
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }.isEmpty)
  }

  /// Hidden directories of killed imports are removed by the next import into the same place
  /// once their process is gone; those of running processes and of unknown makers stay.
  @Test func anImportRemovesTheLeftoversOfKilledImports() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeVariedLog(at: dir.child("log"), count: 30)
    let export = dir.child("x.jsonl")
    let log = try ActionLog(directory: dir.child("log"), access: .readOnly)
    try log.export(to: export)
    try log.close()
    let gone = Process()
    gone.executableURL = URL(fileURLWithPath: "/bin/true")
    try gone.run()
    gone.waitUntilExit()
    let deadPID = gone.processIdentifier
    let destination = dir.child("new")
    let dead = dir.child(".new.import-\(deadPID)-0badc0de")
    let mine = dir.child(".new.import-\(getpid())-5afe5afe")
    let legacy = dir.child(".new.import-1a2b3c4d")
    let otherName = dir.child(".other.import-\(deadPID)-0badc0de")
    for leftover in [dead, mine, legacy, otherName] {
      try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: false)
      try Data(repeating: 7, count: 1000).write(to: leftover.appendingPathComponent("data.mdb"))
    }
    let listed = ActionLog.leftovers(of: destination)
    #expect(listed.map(\.path) == [dead.path, legacy.path, mine.path].sorted())
    #expect(listed.first { $0.path == dead.path }?.creatorRunning == false)
    #expect(listed.first { $0.path == dead.path }?.bytes == 1000)
    #expect(listed.first { $0.path == mine.path }?.creatorRunning == true)
    #expect(listed.first { $0.path == legacy.path }?.pid == nil)

    try ActionLog.importLog(from: export, into: destination)
    #expect(!FileManager.default.fileExists(atPath: dead.path), "the dead import's directory is gone")
    for kept in [mine, legacy, otherName] { #expect(FileManager.default.fileExists(atPath: kept.path)) }
    #expect(ActionLog.leftovers(of: destination).map(\.path) == [legacy.path, mine.path].sorted())
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
