import ChronicleLog
import FixtureApp
import Foundation
import ChronicleTestTools
import Testing

// The cross-language check: Tests/python/read_log.py, written from
// docs/log-format.md alone, reads logs written here and must find exactly
// what was written. Its EXPECTED_JSON input is described in its docstring.

// MARK: - Running the script

/// Runs `Tests/python/read_log.py` with the system's `python3`.
enum PythonReader {
  /// The script.
  static let script = Repository.file("Tests/python/read_log.py")

  /// Whether `python3` runs and has the `lmdb` and `cbor2` modules.
  static let isAvailable: Bool = (try? python(["-c", "import lmdb, cbor2"]).status) == 0

  /// Runs `python3 arguments…`; returns its exit status and its output (stdout and stderr).
  static func python(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let run = try ChildProcess.run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments)
    return (run.status, run.stdout + run.stderr)
  }

  /// Writes `expected` next to the log and runs the script on both.
  static func check(log: URL, expected: ExpectedJSON, in temporary: TemporaryDirectory) throws
    -> (status: Int32, output: String)
  {
    let file = temporary.child("expected-\(UUID().uuidString).json")
    try Data(expected.text.utf8).write(to: file)
    return try python([script.path, log.path, file.path])
  }
}

// MARK: - Expected JSON values

/// A JSON value, written exactly: integers in full, doubles in their shortest round-trip form.
indirect enum ExpectedJSON {
  case null
  case bool(Bool)
  case int(Int64)
  case uint(UInt64)
  case double(Double)
  case string(String)
  case array([ExpectedJSON])
  case object([(String, ExpectedJSON)])

  /// The JSON text.
  var text: String {
    var out = ""
    write(into: &out)
    return out
  }

  private func write(into out: inout String) {
    switch self {
    case .null: out += "null"
    case .bool(let value): out += value ? "true" : "false"
    case .int(let value): out += String(value)
    case .uint(let value): out += String(value)
    case .double(let value): out += value.isFinite ? "\(value)" : "null"
    case .string(let value): Self.quote(value, into: &out)
    case .array(let items):
      out += "["
      for (index, item) in items.enumerated() {
        if index > 0 { out += "," }
        item.write(into: &out)
      }
      out += "]"
    case .object(let members):
      out += "{"
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { out += "," }
        Self.quote(key, into: &out)
        out += ":"
        value.write(into: &out)
      }
      out += "}"
    }
  }

  private static func quote(_ string: String, into out: inout String) {
    out += "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }

  /// An enum case as Swift's `Codable` writes it: `{"name": {fields}}`.
  static func enumCase(_ name: String, _ fields: [(String, ExpectedJSON)] = []) -> ExpectedJSON {
    .object([(name, .object(fields))])
  }

  /// A `Date`: seconds since 2001 in JSON; in CBOR's view, seconds since 1970 as the nearest float
  /// (tag 1's float, or tag 1001's exact value rounded).
  static func date(_ date: Date, _ codec: PayloadCodec) -> ExpectedJSON {
    .double(codec == .json ? date.timeIntervalSinceReferenceDate : date.timeIntervalSince1970)
  }

  /// A `UUID`: `uuidString` in JSON, tag 37 as a lower-case string in CBOR's view.
  static func uuid(_ uuid: UUID, _ codec: PayloadCodec) -> ExpectedJSON {
    .string(codec == .json ? uuid.uuidString : uuid.uuidString.lowercased())
  }

  /// `Data`: base64 text in JSON, a byte string shown as base64 in CBOR's view.
  static func data(_ data: Data) -> ExpectedJSON { .string(data.base64EncodedString()) }

  /// A `Float`: its shortest decimal text in JSON, the float32's exact value in CBOR's view.
  static func float(_ value: Float, _ codec: PayloadCodec) -> ExpectedJSON {
    .double(codec == .json ? Double("\(value)")! : Double(value))
  }
}

/// A nested enum with associated values, labelled, unlabelled and optional.
private indirect enum Command: Codable, Equatable {
  case transfer(from: String, to: String, cents: Int)
  case batch([Command])
  case note(String?)
  case stop

  func view(_ codec: PayloadCodec) -> ExpectedJSON {
    switch self {
    case .transfer(let from, let to, let cents):
      .enumCase("transfer", [("from", .string(from)), ("to", .string(to)), ("cents", .int(Int64(cents)))])
    case .batch(let commands): .enumCase("batch", [("_0", .array(commands.map { $0.view(codec) }))])
    case .note(let text): .enumCase("note", text.map { [("_0", .string($0))] } ?? [])
    case .stop: .enumCase("stop")
    }
  }
}

/// Values at the edges of what both codecs carry (and JSON can represent).
private struct Edges: Codable, Equatable {
  var doubles: [Double]
  var floats: [Float]
  var largest: UInt64
  var smallest: Int64
  var optionals: [Int?]
  var absent: String?
  var present: String?
  var byNumber: [Int: String]
  var link: URL
  var empty: [String]
  var emptyMap: [String: Int]
  var text: String
  var truth: Bool
  var when: Date
  /// Dates a float64 since 1970 cannot carry exactly: CBOR tag 1001, one with a bignum mantissa.
  var exactDates: [Date]
  var id: UUID
  var bytes: Data
  var command: Command

  static let sample = Edges(
    doubles: [
      0.1, -0.0, 1, -123_456.789, 1e-300, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
      -.greatestFiniteMagnitude, 9_007_199_254_740_994, 1e21, .ulpOfOne, .pi,
    ],
    floats: [0.25, -3.5, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.1],
    largest: .max, smallest: .min, optionals: [1, nil, 3], absent: nil, present: "here",
    byNumber: [1: "one", -2: "minus two"], link: URL(string: "https://example.com/a%20b?q=1#frag")!,
    empty: [], emptyMap: [:],
    text: "quote \" backslash \\ tab \t newline \n nul \u{0} bell \u{7} é 日本 🚀 \u{FEFF}",
    truth: true, when: Date(timeIntervalSince1970: 1_767_225_600.123456),
    exactDates: [
      Date(timeIntervalSinceReferenceDate: 0.1), Date(timeIntervalSinceReferenceDate: 1e-10),
      Date(timeIntervalSinceReferenceDate: 817_028_272.227_769_7), Date(timeIntervalSinceReferenceDate: -1.5e-7),
    ],
    id: UUID(),
    bytes: Data([0, 1, 2, 0xFE, 0xFF]),
    command: .batch([
      .transfer(from: "a", to: "b", cents: -500), .note(nil), .note("ok"), .batch([.stop, .batch([])]),
    ]))

  func view(_ codec: PayloadCodec) -> ExpectedJSON {
    var members: [(String, ExpectedJSON)] = [
      ("doubles", .array(doubles.map { .double($0) })),
      ("floats", .array(floats.map { .float($0, codec) })),
      ("largest", .uint(largest)),
      ("smallest", .int(smallest)),
      ("optionals", .array(optionals.map { $0.map { .int(Int64($0)) } ?? .null })),
      ("byNumber", .object(byNumber.map { (String($0.key), .string($0.value)) })),
      ("link", .string(link.absoluteString)),
      ("empty", .array([])),
      ("emptyMap", .object([])),
      ("text", .string(text)),
      ("truth", .bool(truth)),
      ("when", .date(when, codec)),
      ("exactDates", .array(exactDates.map { .date($0, codec) })),
      ("id", .uuid(id, codec)),
      ("bytes", .data(bytes)),
      ("command", command.view(codec)),
    ]
    if let absent { members.append(("absent", .string(absent))) }
    if let present { members.append(("present", .string(present))) }
    return .object(members)
  }
}

extension Sample {
  /// The JSON view of this sample's payload in `codec`.
  func view(_ codec: PayloadCodec) -> ExpectedJSON {
    var members: [(String, ExpectedJSON)] = [
      ("id", .uuid(id, codec)),
      ("when", .date(when, codec)),
      ("name", .string(name)),
      ("kinds", .array(kinds.map { $0.view })),
      ("blob", .data(blob)),
      ("ratio", .double(ratio)),
      ("small", .float(small, codec)),
      ("flags", .object(flags.map { ($0.key, .bool($0.value)) })),
    ]
    if let note { members.append(("note", .string(note))) }
    return .object(members)
  }
}

extension Sample.Kind {
  fileprivate var view: ExpectedJSON {
    switch self {
    case .plain: .enumCase("plain")
    case .amount(let amount, let currency): .enumCase("amount", [("_0", .int(amount)), ("currency", .string(currency))])
    case .nested(let inner):
      .enumCase("nested", [("inner", .object(inner.map { ($0.key, .array($0.value.map { .int(Int64($0)) })) }))])
    }
  }
}

extension CounterAction {
  /// The JSON view of this action, the same in both codecs.
  var view: ExpectedJSON {
    switch self {
    case .set(let value): .enumCase("set", [("_0", .int(Int64(value)))])
    default: .enumCase(typeName)
    }
  }
}

/// The payload of restore, undo and redo entries.
private struct Target: Codable {
  var target: UInt64
}

/// An entry to write and the view the script must find for it.
private struct Planned {
  var entry: NewEntry
  var view: ExpectedJSON
}

private func entryView(_ entry: NewEntry, seq: UInt64, payload: ExpectedJSON, hash: [UInt8]) -> ExpectedJSON {
  .object([
    ("seq", .uint(seq)),
    ("kind", .string(entry.kind.description)),
    ("typeName", .string(entry.typeName)),
    ("metadata", .object(entry.metadata.map { ($0.key, .string($0.value)) })),
    ("payload", payload),
    ("codec", .string(entry.codec.description)),
    ("flags", .int(Int64(entry.flags.rawValue))),
    ("schemaVersion", .int(Int64(entry.schemaVersion))),
    ("timestamp", .int(entry.timestamp!)),
    ("hash", .string(fixtureHex(hash))),
  ])
}

// MARK: - Tests

@Suite(
  .enabled(
    if: PythonReader.isAvailable,
    "needs python3 with the lmdb and cbor2 modules (tools/setup installs them): the cross-language check is skipped"))
struct PythonReaderTests {
  /// The entries of the cross-check log: both codecs, metadata, every payload shape, every kind.
  private func plan() throws -> [Planned] {
    var plan: [Planned] = []
    var timestamp: Int64 = 1_767_225_600_000_000
    func add<T: Encodable>(
      _ value: T, _ view: (PayloadCodec) -> ExpectedJSON, kind: EntryKind = .action, flags: EntryFlags = [],
      typeName: String, metadata: [String: String] = [:], codec: PayloadCodec, schemaVersion: UInt32 = 1
    ) throws {
      timestamp += 1_234_567
      plan.append(
        Planned(
          entry: try NewEntry(
            kind: kind, flags: flags, encoding: value, typeName: typeName, metadata: metadata, codec: codec,
            schemaVersion: schemaVersion, timestamp: timestamp),
          view: view(codec)))
    }
    for n in 0..<12 {
      let metadata: [String: String] =
        n % 3 == 0 ? [:] : ["user": "u\(n)", "reason": "ré \(n) ✓ 🚀", "z": "\"quoted\"\n", "": "empty key"]
      try add(
        Sample.make(n), Sample.make(n).view, flags: EntryFlags(rawValue: UInt8(n % 8)), typeName: "sample",
        metadata: metadata, codec: n % 2 == 0 ? .json : .cbor, schemaVersion: UInt32(1 + n % 3))
    }
    for codec in PayloadCodec.allCases {
      try add(Edges.sample, Edges.sample.view, typeName: "edges", metadata: ["codec": "\(codec)"], codec: codec)
      try add(Edges.sample.command, Edges.sample.command.view, typeName: "batch", codec: codec)
      for action in [CounterAction.set(-5), .increment, .reset, .set(Int.max)] {
        try add(action, { _ in action.view }, typeName: action.typeName, codec: codec)
      }
      let marker = FixtureMarker(label: "release 1.0", note: "notes ✓")
      try add(
        marker, { _ in .object([("label", .string(marker.label)), ("note", .string(marker.note))]) },
        kind: .marker, flags: .notUndoable, typeName: "marker", codec: codec)
      let long = [String(repeating: "λ", count: 40_000), ""]
      try add(long, { _ in .array(long.map { .string($0) }) }, typeName: "long", codec: codec)
    }
    // Reserved flag bits are kept and hashed.
    try add(
      CounterAction.decrement, { _ in CounterAction.decrement.view }, flags: EntryFlags(rawValue: 0xF9),
      typeName: "decrement", codec: .cbor)
    for (kind, target) in [(EntryKind.undo, UInt64(12)), (.redo, 13), (.restore, 0)] {
      try add(
        Target(target: target), { _ in .object([("target", .uint(target))]) }, kind: kind,
        flags: kind == .restore ? [.notUndoable] : [], typeName: kind.description, codec: kind == .redo ? .json : .cbor)
    }
    return plan
  }

  @Test func readsALogWrittenBySwift() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let directory = temporary.child("log")
    let plan = try plan()
    let log = try ActionLog(directory: directory, options: .init(flushInterval: nil, appID: "python-cross-check"))
    // Appended one by one and in a batch: the same bytes either way.
    for planned in plan.prefix(10) { try log.append(planned.entry) }
    try log.append(contentsOf: plan.dropFirst(10).map(\.entry))
    let sampleState = Sample.make(99)
    try log.writeSnapshot(
      at: 5, state: try PayloadCodec.json.encode(sampleState), codec: .json, schemaVersion: 3, auxiliary: [1, 2, 3])
    let lastSeq = UInt64(plan.count)
    try log.writeSnapshot(
      at: lastSeq, state: try PayloadCodec.cbor.encode(Edges.sample), codec: .cbor, schemaVersion: 4)
    let report = try log.verify()
    #expect(report.isValid, "verify() found: \(report.problems)")
    try log.close()

    let reader = try ActionLog(directory: directory, access: .readOnly)
    defer { try? reader.close() }
    var entries: [ExpectedJSON] = []
    for (index, planned) in plan.enumerated() {
      let seq = UInt64(index + 1)
      let record = try #require(try reader.record(at: seq), "entry \(seq) is missing")
      entries.append(entryView(planned.entry, seq: seq, payload: planned.view, hash: record.hash))
    }
    var snapshots: [ExpectedJSON] = []
    for (seq, state) in [(UInt64(5), sampleState.view(.json)), (lastSeq, Edges.sample.view(.cbor))] {
      let snapshot = try #require(try reader.snapshot(at: seq), "snapshot \(seq) is missing")
      snapshots.append(
        .object([
          ("seq", .uint(seq)), ("codec", .string(snapshot.codec.description)),
          ("schemaVersion", .int(Int64(snapshot.schemaVersion))), ("state", state),
          ("chainHash", .string(fixtureHex(snapshot.chainHash))),
          ("auxiliaryHex", .string(fixtureHex(snapshot.auxiliary))),
        ]))
    }
    let head = fixtureHex(report.head)
    let expected = ExpectedJSON.object([
      ("app", .string("python-cross-check")), ("entries", .array(entries)), ("snapshots", .array(snapshots)),
      ("head", .string(head)),
    ])

    let result = try PythonReader.check(log: directory, expected: expected, in: temporary)
    #expect(result.status == 0, "read_log.py: \(result.output)")
    #expect(result.output == "ok: \(plan.count) entries, 2 snapshots, head \(head)\n")
  }

  @Test func readsTheCommittedFixture() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory("v1-counter"))
    let copy = try Fixtures.copy("v1-counter", into: temporary)

    var entries: [ExpectedJSON] = []
    for line in expected.entries {
      let codec = try #require(PayloadCodec(name: line.codec), "entry \(line.seq): codec \(line.codec)")
      let payload = fixtureBytes(hex: line.payloadHex)
      let view: ExpectedJSON
      if line.kind == "marker" {
        let marker = try codec.decode(FixtureMarker.self, from: payload)
        view = .object([("label", .string(marker.label)), ("note", .string(marker.note))])
      } else {
        view = try codec.decode(CounterAction.self, from: payload).view
      }
      entries.append(
        .object([
          ("seq", .uint(line.seq)), ("kind", .string(line.kind)), ("typeName", .string(line.typeName)),
          ("metadata", .object(line.metadata.map { ($0.key, .string($0.value)) })), ("payload", view),
          ("codec", .string(line.codec)), ("flags", .int(Int64(line.flags))),
          ("schemaVersion", .int(Int64(line.schemaVersion))), ("timestamp", .int(line.timestamp)),
          ("hash", .string(line.hashHex)),
        ]))
    }
    var snapshots: [ExpectedJSON] = []
    for line in expected.snapshots {
      let codec = try #require(PayloadCodec(name: line.codec), "snapshot \(line.snapshot): codec \(line.codec)")
      let state = try codec.decode(CounterState.self, from: fixtureBytes(hex: line.stateHex))
      snapshots.append(
        .object([
          ("seq", .uint(line.snapshot)), ("codec", .string(line.codec)),
          ("schemaVersion", .int(Int64(line.schemaVersion))), ("state", .object([("count", .int(Int64(state.count)))])),
          ("chainHash", .string(line.chainHashHex)), ("auxiliaryHex", .string(line.auxiliaryHex)),
        ]))
    }
    let document = ExpectedJSON.object([
      ("app", .string(expected.head.appID)), ("entries", .array(entries)), ("snapshots", .array(snapshots)),
      ("head", .string(expected.head.head)),
    ])

    let result = try PythonReader.check(log: copy, expected: document, in: temporary)
    #expect(result.status == 0, "read_log.py: \(result.output)")
    #expect(
      result.output
        == "ok: \(expected.entries.count) entries, \(expected.snapshots.count) snapshots, head \(expected.head.head)\n")
    // The script opened the copy without creating a lock file.
    #expect(!FileManager.default.fileExists(atPath: copy.appendingPathComponent("lock.mdb").path))
  }

  @Test func reportsTheFirstMismatchWithItsSeq() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let directory = temporary.child("log")
    let log = try ActionLog(directory: directory, options: .init(flushInterval: nil))
    var entries: [ExpectedJSON] = []
    for n in 1...3 {
      let entry = try NewEntry(
        encoding: CounterAction.set(n), typeName: "set", metadata: ["tag": "tamper-me-\(n)-0123456789"],
        codec: n == 2 ? .json : .cbor, timestamp: Int64(n) * 1_000_000)
      let seq = try log.append(entry)
      let record = try #require(try log.record(at: seq))
      entries.append(entryView(entry, seq: seq, payload: CounterAction.set(n).view, hash: record.hash))
    }
    let head = fixtureHex(try log.head().hash)
    try log.close()

    // A wrong expectation is reported with the entry's seq.
    var wrong = entries
    if case .object(var members) = wrong[1] {
      members = members.map { $0.0 == "payload" ? ($0.0, CounterAction.set(-2).view) : $0 }
      wrong[1] = .object(members)
    }
    let mismatch = try PythonReader.check(
      log: directory, expected: .object([("entries", .array(wrong)), ("head", .string(head))]), in: temporary)
    #expect(mismatch.status == 1, "read_log.py: \(mismatch.output)")
    #expect(mismatch.output.hasPrefix("mismatch: entry 2: payload"), "read_log.py: \(mismatch.output)")

    // A changed byte in the file breaks entry 2's chain hash (LMDB itself checks nothing).
    let dataFile = directory.appendingPathComponent("data.mdb")
    var data = try Data(contentsOf: dataFile)
    let needle = Data("tamper-me-2-0123456789".utf8)
    var patched = 0
    var searchStart = data.startIndex
    while let range = data.range(of: needle, in: searchStart..<data.endIndex) {
      data[range.upperBound - 1] = UInt8(ascii: "8")
      searchStart = range.upperBound
      patched += 1
    }
    #expect(patched > 0, "the metadata value was not found in data.mdb")
    try data.write(to: dataFile)
    let tampered = try PythonReader.check(
      log: directory, expected: .object([("entries", .array(entries)), ("head", .string(head))]), in: temporary)
    #expect(tampered.status == 1, "read_log.py: \(tampered.output)")
    #expect(tampered.output.hasPrefix("mismatch: entry 2: chain hash mismatch"), "read_log.py: \(tampered.output)")

    let reader = try ActionLog(directory: directory, access: .readOnly)
    defer { try? reader.close() }
    #expect(try reader.verify().firstBadSeq == 2, "Swift's verify() agrees")
  }
}
