import Foundation
import ChronicleLMDB
import LogToolKit
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// The extreme integers (0, 1, max, min, max − 1) of every numeric field of entries, snapshots,
/// meta and export files, through every command, in process: no crash, and either a sane
/// output (JSON that parses, the value shown as it is) or one clear line naming the path.
@Suite(.serialized) struct ExtremeValueToolTests {
  static let int64s: [Int64] = [0, 1, .max, .min, .max - 1]
  static let uint64s: [UInt64] = [0, 1, .max, .max - 1]
  static let uint32s: [UInt32] = [0, 1, .max, .max - 1]
  static let uint16s: [UInt16] = [0, 1, .max, .max - 1]
  static let uint8s: [UInt8] = [0, 1, .max, .max - 1]

  /// Runs a `logtool` command in this process and captures what it prints.
  static func run(_ arguments: [String]) async -> ChildResult {
    let capture = OutputCapture()
    let status = await OutputCapture.$current.withValue(capture) {
      await LogTool.execute(LogToolCommand.self, arguments: arguments)
    }
    return ChildResult(status: status, stdout: capture.standardOutput, stderr: capture.standardError)
  }

  /// Every command on `log` (compaction last: it changes the log); each must end with 0 and
  /// print something (JSON that parses with `--json`), or with 1 or 2 and one line naming the log.
  static func everyCommand(on log: URL, scratch: TemporaryDirectory, context: String) async throws {
    let export = scratch.child("export-\(UUID().uuidString).jsonl")
    let commands: [[String]] = [
      ["info", log.path], ["info", log.path, "--json"], ["list", log.path], ["list", log.path, "--json"],
      ["show", log.path, "1"], ["show", log.path, "1", "--json"], ["tail", log.path], ["tail", log.path, "--json"],
      ["verify", log.path], ["verify", log.path, "--json"], ["stats", log.path], ["stats", log.path, "--json"],
      ["snapshots", log.path], ["snapshots", log.path, "--json"], ["export", log.path, "-o", export.path],
      ["import", export.path, "--into", scratch.child("imported-\(UUID().uuidString)").path],
      [
        "compact", log.path, "--before", String(UInt64.max), "--archive",
        scratch.child("archive-\(UUID().uuidString)").path,
      ],
    ]
    for arguments in commands {
      let result = await run(arguments)
      let what = "\(context): logtool \(arguments.joined(separator: " "))"
      if result.status == 0 {
        #expect(!result.stdout.isEmpty, "\(what) printed nothing")
        if arguments.contains("--json") {
          #expect(
            (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8), options: [.fragmentsAllowed])) != nil,
            "\(what) printed JSON that does not parse: \(result.stdout.prefix(300))")
        }
      } else {
        #expect([1, 2].contains(result.status), "\(what) ended with \(result.status)")
        #expect(result.errorLines.count == 1, "\(what): one line on stderr: \(result.stderr)")
        let named = result.stderr.contains(log.path) || result.stderr.contains(export.path)
        #expect(named, "\(what): the error names the path: \(result.stderr)")
      }
      if arguments[0] == "import", result.status != 0 {
        let hidden = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "\(what): a refused import leaves nothing behind: \(hidden)")
      }
    }
  }

  /// A log of three entries and a snapshot at 2, built with `entry` for the middle entry.
  static func makeLog(at url: URL, middle: NewEntry, snapshotSchema: UInt32 = 1, schema: UInt32 = 1) throws {
    let log = try ActionLog(
      directory: url, options: .init(durability: .normal, flushInterval: nil, appID: "extremes", schemaVersion: schema))
    defer { try? log.close() }
    try log.append(NewEntry(typeName: "first", codec: .json, payload: Array(#"{"n":1}"#.utf8), timestamp: 5))
    try log.append(middle)
    try log.writeSnapshot(at: 2, state: Array(#"{"count":2}"#.utf8), codec: .json, schemaVersion: snapshotSchema)
    try log.append(NewEntry(typeName: "third", codec: .cbor, payload: try PayloadCodec.cbor.encode([3]), timestamp: 7))
  }

  static func entry(
    flags: UInt8 = 0, schemaVersion: UInt32 = 1, timestamp: Int64 = 6
  ) -> NewEntry {
    NewEntry(
      flags: EntryFlags(rawValue: flags), typeName: "middle", metadata: ["user": "u"], codec: .json,
      schemaVersion: schemaVersion, payload: Array(#"{"set":{"_0":2}}"#.utf8), timestamp: timestamp)
  }

  @Test func timesOfEveryInt64AreShownAsISOText() {
    #expect(ISOTime.string(micros: .max) == "294247-01-10T04:00:54.775807Z")
    #expect(ISOTime.string(micros: .min) == "-290308-12-21T19:59:05.224192Z")
    #expect(ISOTime.string(micros: .min + 1) == "-290308-12-21T19:59:05.224193Z")
    #expect(ISOTime.day(micros: .min) == "-290308-12-21")
    #expect(ISOTime.string(micros: -1) == "1969-12-31T23:59:59.999999Z")
  }

  @Test func entryAndSnapshotFieldsThroughEveryCommand() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    var variants: [(String, NewEntry, UInt32, UInt32)] = []
    for value in Self.int64s { variants.append(("timestamp \(value)", Self.entry(timestamp: value), 1, 1)) }
    for value in Self.uint32s {
      variants.append(("entry schema \(value)", Self.entry(schemaVersion: value), 1, 1))
      variants.append(("snapshot schema \(value)", Self.entry(), value, 1))
      variants.append(("meta schema \(value)", Self.entry(), 1, value))
    }
    for value in Self.uint8s { variants.append(("flags \(value)", Self.entry(flags: value), 1, 1)) }
    for (index, (context, middle, snapshotSchema, schema)) in variants.enumerated() {
      let log = scratch.child("log-\(index)")
      try Self.makeLog(at: log, middle: middle, snapshotSchema: snapshotSchema, schema: schema)
      if context.hasPrefix("timestamp") {
        let shown = await Self.run(["show", log.path, "2", "--json"])
        let expected = ISOTime.string(micros: middle.timestamp ?? 0)
        #expect(shown.status == 0 && shown.stdout.contains(#""time":"\#(expected)""#), "\(context): \(shown)")
      }
      try await Self.everyCommand(on: log, scratch: scratch, context: context)
    }
  }

  @Test func metaFieldsThroughEveryCommand() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    var edits: [(String, String, [UInt8])] = []
    for value in Self.int64s { edits.append(("created \(value)", "created", bigEndian(value))) }
    for value in Self.uint32s { edits.append(("format \(value)", "format", bigEndian(value))) }
    for value in Self.uint64s {
      edits.append(("anchor \(value)", "anchor", bigEndian(value) + [UInt8](repeating: 0, count: 32)))
    }
    for (index, (context, key, value)) in edits.enumerated() {
      let log = scratch.child("log-\(index)")
      try Self.makeLog(at: log, middle: Self.entry())
      try withRawEnvironment(log) { environment, _, meta in
        try environment.write { txn in try txn.put(value, forKey: Array(key.utf8), in: meta) }
      }
      if key == "anchor", value.starts(with: bigEndian(UInt64.max)) {
        let verified = await Self.run(["verify", log.path])
        #expect(verified.status == 1, "\(context): \(verified)")
        #expect(verified.stderr.contains("anchor's sequence number 18446744073709551615"), "\(context): \(verified)")
      }
      try await Self.everyCommand(on: log, scratch: scratch, context: context)
    }
  }

  /// A snapshot's timestamp and inner sequence number, stored with a recomputed checksum.
  @Test func snapshotFieldsThroughEveryCommand() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    var edits: [(String, (inout Snapshot) -> Void)] = []
    for value in Self.int64s { edits.append(("snapshot timestamp \(value)", { $0.timestamp = value })) }
    for value in Self.uint64s { edits.append(("snapshot seq \(value)", { $0.seq = value })) }
    for (index, (context, edit)) in edits.enumerated() {
      let log = scratch.child("log-\(index)")
      try Self.makeLog(at: log, middle: Self.entry())
      try withRawEnvironment(log) { environment, _, _ in
        try environment.write { txn in
          let snapshots = try txn.openDatabase(named: "snapshots")
          let key = bigEndian(UInt64(2))
          let stored = try #require(try txn.get(forKey: key, in: snapshots))
          var snapshot = try stored.withUnsafeBytes { try SnapshotFormat.decode(seq: 2, value: $0) }
          edit(&snapshot)
          try txn.put(try SnapshotFormat.encode(snapshot), forKey: key, in: snapshots)
        }
      }
      if context.contains("timestamp") {
        let listed = await Self.run(["snapshots", log.path, "--json"])
        #expect(listed.status == 0, "\(context): \(listed)")
      }
      try await Self.everyCommand(on: log, scratch: scratch, context: context)
    }
  }

  /// The header's length fields and the sequence numbers of keys, stored as is (the hash no
  /// longer matches, or the key breaks the sequence): reported, never a crash.
  @Test func entryHeaderLengthsAndKeysThroughEveryCommand() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    var edits: [(String, (inout [UInt8]) -> Void)] = []
    for value in Self.uint16s {
      edits.append(("type name length \(value)", { $0.replaceSubrange(16..<18, with: bigEndian(value)) }))
      edits.append(("metadata count \(value)", { $0.replaceSubrange(18..<20, with: bigEndian(value)) }))
    }
    for value in Self.uint32s {
      edits.append(("payload length \(value)", { $0.replaceSubrange(20..<24, with: bigEndian(value)) }))
      edits.append(("schema \(value), hash kept", { $0.replaceSubrange(4..<8, with: bigEndian(value)) }))
    }
    for value in Self.int64s {
      edits.append(("timestamp \(value), hash kept", { $0.replaceSubrange(8..<16, with: bigEndian(value)) }))
    }
    var index = 0
    for (context, edit) in edits {
      index += 1
      let log = scratch.child("log-\(index)")
      try Self.makeLog(at: log, middle: Self.entry())
      try withRawEnvironment(log) { environment, entries, _ in
        try environment.write { txn in
          let key = bigEndian(UInt64(2))
          var value = try #require(try txn.get(forKey: key, in: entries))
          edit(&value)
          try txn.put(value, forKey: key, in: entries)
        }
      }
      try await Self.everyCommand(on: log, scratch: scratch, context: context)
    }
    for seq in Self.uint64s where seq > 3 {
      index += 1
      let log = scratch.child("log-\(index)")
      try Self.makeLog(at: log, middle: Self.entry())
      try withRawEnvironment(log) { environment, entries, _ in
        try environment.write { txn in
          let value = try #require(try txn.get(forKey: bigEndian(UInt64(3)), in: entries))
          try txn.put(value, forKey: bigEndian(seq), in: entries)
          // A longer key sorts after the largest 8-byte one.
          try txn.put(value, forKey: bigEndian(seq) + [0], in: entries)
          let snapshots = try txn.openDatabase(named: "snapshots")
          let snapshot = try #require(try txn.get(forKey: bigEndian(UInt64(2)), in: snapshots))
          try txn.put(snapshot, forKey: bigEndian(seq), in: snapshots)
        }
      }
      try await Self.everyCommand(on: log, scratch: scratch, context: "an entry and a snapshot keyed \(seq)")
    }
  }

  /// Every numeric field of an export's lines set to each extreme: `import` and `checkExport`
  /// refuse it with the line and a reason, or import it into a log that verifies.
  @Test func exportFieldsThroughImport() async throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Self.makeLog(at: log, middle: Self.entry())
    let export = scratch.child("export.jsonl")
    #expect(await Self.run(["export", log.path, "-o", export.path]).status == 0)
    let lines = try String(contentsOf: export, encoding: .utf8).split(separator: "\n").map(String.init)
    let extremes = ["0", "1", String(UInt64.max), String(Int64.min), String(UInt64.max - 1), String(Int64.max)]
    var cases = 0
    for (lineIndex, line) in lines.enumerated() {
      let numbers = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      var fields = numbers.filter { $0.value is NSNumber }.map(\.key)
      if numbers["anchor"] != nil { fields += ["anchor.seq", "head.seq"] }
      if numbers["snapshots"] != nil { fields += ["snapshots[0]"] }
      for field in fields.sorted() {
        for extreme in extremes {
          var changed = lines
          changed[lineIndex] = Self.replace(field, in: line, with: extreme)
          guard changed[lineIndex] != line else { continue }
          cases += 1
          let file = scratch.child("changed-\(cases).jsonl")
          try (changed.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
          let context = "line \(lineIndex + 1) \(field) = \(extreme)"
          let destination = scratch.child("imported-\(cases)")
          let result = await Self.run(["import", file.path, "--into", destination.path])
          if result.status == 0 {
            let imported = try ActionLog(directory: destination, access: .readOnly)
            #expect(try imported.verify().isValid, "\(context)")
            try imported.close()
          } else {
            #expect(result.status == 2, "\(context): \(result)")
            #expect(result.errorLines.count == 1 && result.stderr.contains(file.path), "\(context): \(result)")
            #expect(!FileManager.default.fileExists(atPath: destination.path), "\(context)")
          }
          let hidden = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".") }
          #expect(hidden.isEmpty, "\(context): no temporary directory is left behind: \(hidden)")
        }
      }
    }
    #expect(cases > 60, "every numeric field was changed: \(cases) cases")
  }

  /// `line` with the number of `field` (`name`, `name.seq`, `name[0]`) replaced by `value`.
  static func replace(_ field: String, in line: String, with value: String) -> String {
    var pattern: String
    if field.hasSuffix("[0]") {
      pattern = #""\#(field.dropLast(3))":\["#
      guard let range = line.range(of: pattern) else { return line }
      return replaceNumber(after: range.upperBound, in: line, with: value)
    }
    let parts = field.split(separator: ".")
    pattern = parts.count == 2 ? #""\#(parts[0])":{"seq":"# : #""\#(field)":"#
    guard let range = line.range(of: pattern) else { return line }
    return replaceNumber(after: range.upperBound, in: line, with: value)
  }

  private static func replaceNumber(after start: String.Index, in line: String, with value: String) -> String {
    var end = start
    while end < line.endIndex, "-0123456789".contains(line[end]) { end = line.index(after: end) }
    guard end > start else { return line }
    return line.replacingCharacters(in: start..<end, with: value)
  }
}

/// The big-endian bytes of `value`.
func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
  withUnsafeBytes(of: value.bigEndian) { Array($0) }
}
