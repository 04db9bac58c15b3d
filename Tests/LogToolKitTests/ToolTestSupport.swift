import ChronicleLog
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The repository's files these tests read: fixtures and golden outputs.
extension Repository {
  /// The golden outputs next to this file.
  static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
    "Golden")
  /// The committed `fixtures/v1-counter`.
  static let fixture = Fixtures.directory("v1-counter")

  /// Copies the committed `fixtures/v1-counter` log (its `data.mdb` only) to `destination`,
  /// waiting up to a minute for the fixture to appear if it is being written.
  static func copyFixture(to destination: URL) throws {
    let data = fixture.appendingPathComponent("data.mdb")
    let deadline = Date().addingTimeInterval(60)
    while !FileManager.default.fileExists(atPath: data.path), Date() < deadline { usleep(500_000) }
    try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
    try FileManager.default.copyItem(at: data, to: destination.appendingPathComponent("data.mdb"))
  }

  /// The lines of `fixtures/v1-counter/expected.jsonl`, decoded.
  static func fixtureExpectations() throws -> [[String: Any]] {
    let text = try String(contentsOf: fixture.appendingPathComponent("expected.jsonl"), encoding: .utf8)
    return try text.split(separator: "\n").map {
      try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
    }
  }
}

/// Runs the built tools (`logtool`, the demo's executables) as the tests' child processes.
enum Tool {
  /// Runs `tool` (`logtool` by default) with `arguments` to its end; a run that outlives
  /// `timeout` seconds is killed and fails the test.
  static func run(
    _ arguments: [String], tool: String = "logtool", timeout: TimeInterval = 120, environment: [String: String]? = nil
  ) throws -> ChildResult {
    let result = try ChildProcess.run(tool, arguments, timeout: timeout, environment: environment)
    if result.timedOut { Issue.record("\(tool) \(arguments.joined(separator: " ")) did not end within \(timeout) s") }
    return result
  }
}

/// Opens the log's LMDB environment directly (no `ActionLog` may have it open) and hands
/// `body` the environment and its `entries` and `meta` databases.
func withRawEnvironment(_ directory: URL, _ body: (Environment, Database, Database) throws -> Void) throws {
  let environment = try Environment(path: directory.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 4))
  defer { environment.close() }
  try body(environment, try environment.openDatabase(named: "entries"), try environment.openDatabase(named: "meta"))
}

/// Writes meta `format` = `version` through the LMDB module, as a newer Chronicle would.
func writeFormatVersion(_ version: UInt32, in directory: URL) throws {
  try withRawEnvironment(directory) { environment, _, meta in
    try environment.write { txn in
      try txn.put(withUnsafeBytes(of: version.bigEndian) { Array($0) }, forKey: Array("format".utf8), in: meta)
    }
  }
}

/// A log of `count` entries of varied kinds and codecs, with a snapshot every `snapshotEvery`.
func makeLog(at directory: URL, count: Int, snapshotEvery: Int, payloadBytes: Int = 64) throws {
  let log = try ActionLog(directory: directory, options: .init(durability: .normal, flushInterval: nil, appID: "tests"))
  defer { try? log.close() }
  var seq = 0
  while seq < count {
    let batch = (0..<min(1000, count - seq)).map { offset -> NewEntry in
      let n = seq + offset + 1
      return NewEntry(
        kind: n % 97 == 0 ? .marker : .action, flags: EntryFlags(rawValue: UInt8(n % 8)),
        typeName: ["increment", "decrement", "set"][n % 3], metadata: n % 5 == 0 ? ["user": "u\(n % 7)"] : [:],
        codec: n % 2 == 0 ? .cbor : .json, schemaVersion: 1,
        payload: n % 2 == 0
          ? try! PayloadCodec.cbor.encode(["set": ["_0": String(repeating: "x", count: payloadBytes)]])
          : Array(#"{"set":{"_0":"\#(String(repeating: "y", count: payloadBytes))"}}"#.utf8),
        timestamp: 1_767_225_600_000_000 + Int64(n) * 1_000_000)
    }
    let range = try log.append(contentsOf: batch)
    seq = Int(range.upperBound)
    var snapshotSeq = (Int(range.lowerBound) + snapshotEvery - 1) / snapshotEvery * snapshotEvery
    while snapshotSeq <= seq {
      try log.writeSnapshot(
        at: UInt64(snapshotSeq), state: Array("{\"count\":\(snapshotSeq)}".utf8), codec: .json, schemaVersion: 1)
      snapshotSeq += snapshotEvery
    }
  }
}
