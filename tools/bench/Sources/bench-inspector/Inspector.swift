import Chronicle
import ChronicleInspector
import ChronicleLog
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `bench-inspector`: the web inspector on a log of a million entries, served in this process on
/// a loopback port and asked with real HTTP requests, as the page asks:
///
/// - first page: the first `entries` request a freshly opened inspector answers (one per opening);
/// - later pages: pages of 200 at random places;
/// - state at seq: `state/SEQ` at random sequence numbers (snapshots every 1,000 entries);
/// - stats and verify: the first request (the whole log), and after another process appended
///   1,000 entries (only those are read).
enum InspectorBench {
  static let usage = """
    usage: bench-inspector [--entries N] [--samples N] [--scratch DIR]

    Writes a log of N entries (default 1000000) through a store with a snapshot
    every 1,000 entries, serves it with the inspector on a loopback port and
    times real HTTP requests: medians and 95th percentiles in milliseconds,
    checked against the targets of docs/inspector.md.
    """

  /// A counter whose state is small and whose every entry changes it.
  struct Counter: Reducer {
    struct State: Codable, Sendable {
      var total = 0
      var count = 0
    }
    enum Action: Codable, Sendable { case add(Int) }
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      if case .add(let value) = action {
        state.total += value
        state.count += 1
      }
      return .none
    }
  }

  static func run(_ arguments: [String]) throws {
    if arguments.first == "--append", arguments.count == 3, let count = Int(arguments[2]) {
      // The other process of the growth rows: appends `count` entries and exits.
      let writer = try ActionLog(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
      _ = try writer.append(
        contentsOf: try (0..<count).map { try NewEntry(encoding: $0, typeName: "grown", codec: .cbor) })
      try writer.close()
      return
    }
    var entries = 1_000_000
    var samples = 50
    var scratch = FileManager.default.temporaryDirectory
    var index = 0
    while index < arguments.count {
      switch arguments[index] {
      case "--entries" where index + 1 < arguments.count:
        index += 1
        guard let value = Int(arguments[index]), value >= 1000 else { throw BenchError("--entries needs N ≥ 1000") }
        entries = value
      case "--samples" where index + 1 < arguments.count:
        index += 1
        guard let value = Int(arguments[index]), value >= 1 else { throw BenchError("--samples needs N ≥ 1") }
        samples = value
      case "--scratch" where index + 1 < arguments.count:
        index += 1
        scratch = URL(fileURLWithPath: arguments[index], isDirectory: true)
      case "-h", "--help":
        print(usage)
        return
      default: throw BenchError("unknown argument \(arguments[index])\n\n\(usage)")
      }
      index += 1
    }
    let root = scratch.appendingPathComponent("chronicle-bench-\(getpid())-inspector", isDirectory: true)
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let directory = root.appendingPathComponent("log", isDirectory: true)
    let options = StoreOptions(snapshotEvery: 1_000, flushInterval: nil)

    let writing = ContinuousClock.now
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(directory), options: options)
    var sent = 0
    while sent < entries {
      let batch = (0..<min(10_000, entries - sent)).map { Counter.Action.add(($0 + sent) % 100) }
      _ = try store.send(contentsOf: batch)
      sent += batch.count
    }
    try store.close()
    let took = ContinuousClock.now - writing
    FileHandle.standardError.write(Data("wrote \(entries) entries in \(took)\n".utf8))

    let result = Box()
    let done = DispatchSemaphore(value: 0)
    Task {
      do { result.rows = try await measure(directory: directory, entries: UInt64(entries), samples: samples, options: options) } catch {
        result.error = error
      }
      done.signal()
    }
    done.wait()
    if let error = result.error { throw error }
    print("load \(Machine.load()) · \(entries) entries · \(samples) samples · release")
    print("| request | median | p95 | target | |")
    print("|---|---|---|---|---|")
    for row in result.rows {
      let passed = row.target.map { row.median < $0 ? "✓" : "✗" } ?? ""
      print(
        "| \(row.name) | \(milliseconds(row.median)) | \(milliseconds(row.p95)) | "
          + "\(row.target.map { "< " + milliseconds($0) } ?? "") | \(passed) |")
    }
  }

  /// A measured request.
  struct Row: Sendable {
    var name: String
    var median: Double
    var p95: Double
    var target: Double?
  }

  /// The rows or the error the measuring task hands back to the waiting thread.
  final class Box: @unchecked Sendable {
    // Sound: written by the task before it signals, read by the thread after it waits.
    var rows: [Row] = []
    var error: (any Error)?
  }

  static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

  static func inspector(directory: URL, options: StoreOptions) throws -> Inspector {
    let reader = try HistoryReader(
      directory: directory, initialState: Counter.State(), reducer: Counter(), options: options)
    let states = InspectorStates(
      state: { seq in Array(try JSONEncoder().encode(try reader.state(at: seq))) }, close: { reader.close() })
    return try Inspector(directory: directory, states: states)
  }

  /// Serves `inspector` on a free loopback port while `body` runs with its base URL.
  static func serving<T: Sendable>(_ inspector: Inspector, _ body: (String) async throws -> T) async throws -> T {
    let (ports, announce) = AsyncStream<Int>.makeStream()
    let app = inspector.application(host: "127.0.0.1", port: 0) { port in announce.yield(port) }
    let server = Task { try await app.runService() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw BenchError("the inspector did not start") }
    defer { server.cancel() }
    return try await body("http://127.0.0.1:\(port)")
  }

  /// One GET, timed; fails on any status but 200.
  static func timed(_ url: String) async throws -> (seconds: Double, body: Data) {
    let started = ContinuousClock.now
    let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
    let seconds = (ContinuousClock.now - started).seconds
    guard (response as? HTTPURLResponse)?.statusCode == 200 else {
      throw BenchError("\(url) answered \((response as? HTTPURLResponse)?.statusCode ?? 0): \(String(decoding: data, as: UTF8.self).prefix(200))")
    }
    return (seconds, data)
  }

  static func row(_ name: String, _ times: [Double], target: Double?) -> Row {
    Row(name: name, median: median(times), p95: percentile(times, 95), target: target)
  }

  static func measure(directory: URL, entries: UInt64, samples: Int, options: StoreOptions) async throws -> [Row] {
    var rows: [Row] = []
    var random = SystemRandomNumberGenerator()
    // First page: a fresh inspector each time, its first request.
    var first: [Double] = []
    for _ in 0..<max(5, min(samples, 10)) {
      let inspector = try inspector(directory: directory, options: options)
      defer { inspector.close() }
      first.append(try await serving(inspector) { base in try await timed(base + "/api/entries?from=1&limit=200").seconds })
    }
    rows.append(row("first page (200 entries)", first, target: 0.200))

    let inspector = try inspector(directory: directory, options: options)
    defer { inspector.close() }
    try await serving(inspector) { base in
      var pages: [Double] = []
      for _ in 0..<samples {
        let from = UInt64.random(in: 1...entries, using: &random)
        pages.append(try await timed(base + "/api/entries?from=\(from)&limit=200").seconds)
      }
      rows.append(row("later page (200 entries)", pages, target: 0.050))
      var newest: [Double] = []
      for _ in 0..<samples { newest.append(try await timed(base + "/api/entries?order=desc&limit=200").seconds) }
      rows.append(row("newest page (desc)", newest, target: 0.050))
      var one: [Double] = []
      for _ in 0..<samples {
        one.append(try await timed(base + "/api/entries/\(UInt64.random(in: 1...entries, using: &random))").seconds)
      }
      rows.append(row("one entry", one, target: nil))
      var states: [Double] = []
      for _ in 0..<samples {
        states.append(try await timed(base + "/api/state/\(UInt64.random(in: 1...entries, using: &random))").seconds)
      }
      rows.append(row("state at seq", states, target: 0.020))

      rows.append(row("stats, first request", [try await timed(base + "/api/stats").seconds], target: nil))
      rows.append(row("verify, first request", [try await timed(base + "/api/verify").seconds], target: nil))
      var stats: [Double] = []
      var verify: [Double] = []
      for round in 0..<5 {
        // Another writer appends 1,000 entries; then the page's two requests.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        writer.arguments = ["--append", directory.path, "1000"]
        try writer.run()
        writer.waitUntilExit()
        guard writer.terminationStatus == 0 else { throw BenchError("the writer process failed in round \(round)") }
        stats.append(try await timed(base + "/api/stats").seconds)
        let (seconds, body) = try await timed(base + "/api/verify")
        verify.append(seconds)
        let chain = (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["chain"] as? [String: Any]
        guard chain?["valid"] as? Bool == true, chain?["incremental"] != nil else {
          throw BenchError("verify after growth was not incremental or not valid: \(String(decoding: body, as: UTF8.self).prefix(300))")
        }
      }
      rows.append(row("stats after 1,000 more", stats, target: 0.050))
      rows.append(row("verify after 1,000 more", verify, target: 0.050))
    }
    return rows
  }
}
