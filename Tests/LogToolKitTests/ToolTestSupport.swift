import ChronicleLog
import Foundation
import LMDB
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
struct ScratchDirectory {
  let url: URL
  var path: String { url.path }

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("logtool-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// A path inside it.
  func child(_ name: String) -> URL { url.appendingPathComponent(name) }

  func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The repository's files the tests read: fixtures and golden outputs.
enum Repository {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
    "Golden")
  static let fixture = root.appendingPathComponent("fixtures/v1-counter")

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

/// What a run of a child process printed and how it ended.
struct ToolResult {
  var status: Int32
  var stdout: String
  var stderr: String

  /// Standard error's non-empty lines.
  var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// Runs the built executables that sit next to the test bundle.
enum Tool {
  static func executable(_ name: String) -> URL {
    Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent(name)
  }

  /// Runs `tool` (`logtool` by default) with `arguments` and waits (at most `timeout` seconds) for it to end.
  static func run(_ arguments: [String], tool: String = "logtool", timeout: TimeInterval = 120) throws -> ToolResult {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    let out = scratch.child("stdout")
    let err = scratch.child("stderr")
    try Data().write(to: out)
    try Data().write(to: err)
    let process = Process()
    process.executableURL = executable(tool)
    process.arguments = arguments
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning {
      if Date() > deadline {
        kill(process.processIdentifier, SIGKILL)
        Issue.record("\(tool) \(arguments.joined(separator: " ")) did not end within \(timeout) s")
      }
      usleep(2_000)
    }
    process.waitUntilExit()
    return ToolResult(
      status: process.terminationStatus, stdout: try String(contentsOf: out, encoding: .utf8),
      stderr: try String(contentsOf: err, encoding: .utf8))
  }
}

/// Lines a child process prints, each with the time it arrived, collected on a background thread.
final class LineCollector: Sendable {
  private let state = Mutex<(lines: [(String, Date)], partial: [UInt8])>(([], []))

  /// Starts collecting from `handle`.
  func collect(from handle: FileHandle) {
    handle.readabilityHandler = { [self] handle in
      let data = handle.availableData
      if data.isEmpty {
        handle.readabilityHandler = nil
        return
      }
      let now = Date()
      state.withLock { state in
        state.partial.append(contentsOf: data)
        while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
          state.lines.append((String(decoding: state.partial[..<newline], as: UTF8.self), now))
          state.partial.removeSubrange(...newline)
        }
      }
    }
  }

  /// The lines so far.
  var lines: [(text: String, time: Date)] { state.withLock { $0.lines.map { ($0.0, $0.1) } } }
}

/// A child process whose standard output is collected line by line as it arrives.
final class Child {
  let process = Process()
  let output = LineCollector()
  private let pipe = Pipe()

  init(_ executable: String, _ arguments: [String]) throws {
    process.executableURL = Tool.executable(executable)
    process.arguments = arguments
    process.standardOutput = pipe
    process.standardError = FileHandle.standardError
    process.standardInput = FileHandle.nullDevice
    output.collect(from: pipe.fileHandleForReading)
    try process.run()
  }

  /// Waits up to `timeout` seconds for the child to end; kills it after that.
  @discardableResult
  func wait(timeout: TimeInterval = 60) -> Int32 {
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning, Date() < deadline { usleep(2_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// Waits until `condition` holds for the collected lines (or `timeout` passes).
  func waitFor(timeout: TimeInterval, _ condition: ([(text: String, time: Date)]) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if condition(output.lines) { return true }
      usleep(5_000)
    }
    return condition(output.lines)
  }
}

/// Every key and value of a log's three databases, read through the LMDB module.
struct RawDump: Equatable {
  var entries: [[UInt8]: [UInt8]] = [:]
  var snapshots: [[UInt8]: [UInt8]] = [:]
  var meta: [[UInt8]: [UInt8]] = [:]

  init(_ directory: URL) throws {
    let environment = try Environment(
      path: directory.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 4, flags: [.readOnly]))
    defer { environment.close() }
    for name in ["entries", "snapshots", "meta"] {
      let db = try environment.openDatabase(named: name)
      let pairs: [[UInt8]: [UInt8]] = try environment.read { txn in
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
      switch name {
      case "entries": entries = pairs
      case "snapshots": snapshots = pairs
      default:
        meta = pairs
        // Every log gets its own random identity (`log-id`); exports and salvage do not carry it.
        meta[Array("log-id".utf8)] = nil
      }
    }
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
