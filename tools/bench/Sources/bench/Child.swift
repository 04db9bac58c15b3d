import Chronicle
import ChronicleLog
import Foundation

/// What a child process measured, printed as one JSON line after ``ChildResult/marker``.
struct ChildResult: Codable, Sendable {
  static let marker = "BENCH-RESULT "

  /// Seconds the measured section took.
  var seconds: Double
  /// Items it processed (entries replayed, actions sent, queries answered).
  var items: Int
  /// `VmHWM` at the end: the peak resident set, mapped log pages included.
  var peakResident: Int
  /// The peak of `RssAnon` sampled during the section: what the process allocated.
  var peakAnonymous: Int
  /// `RssAnon` just before the section.
  var baselineAnonymous: Int
  /// Per-item latencies in seconds, where the child measures them.
  var latencies: [Double] = []
}

/// Work run in a fresh process, so its time and memory are its own: the
/// replays of W4/W8, and the workloads profiled under callgrind.
///
/// `bench --child KIND key=value …`; `replay-chronicle` takes `actions=codable`
/// to decode the ledger's entries through `Codable` instead of `CBORCodable`, and
/// `actions=macro` to decode them through the conformance `@CBORCodable` generates.
/// `build-ledger path=DIR entries=N` writes the ledger log W4 replays, for a profiler
/// (`perf record -- bench --child replay-chronicle path=DIR entries=N actions=macro`).
enum Child {
  static func run(_ arguments: [String]) throws {
    guard let kind = arguments.first else { throw BenchError("--child needs a kind") }
    var parameters: [String: String] = [:]
    for argument in arguments.dropFirst() {
      guard let equals = argument.firstIndex(of: "=") else { throw BenchError("expected key=value, got \(argument)") }
      parameters[String(argument[..<equals])] = String(argument[argument.index(after: equals)...])
    }
    func string(_ key: String) throws -> String {
      guard let value = parameters[key] else { throw BenchError("--child \(kind) needs \(key)=…") }
      return value
    }
    func int(_ key: String, _ fallback: Int? = nil) throws -> Int {
      if let fallback, parameters[key] == nil { return fallback }
      guard let value = Int(try string(key)) else { throw BenchError("\(key) must be an integer") }
      return value
    }
    let accounts = try int("accounts", 100)
    let codec = PayloadCodec(name: parameters["codec"] ?? "cbor") ?? .cbor

    let result: ChildResult
    switch kind {
    case "replay-chronicle":
      let path = try string("path")
      let entries = try int("entries")
      switch parameters["actions"] ?? "cborcodable" {
      case "cborcodable":
        result = try replayChronicle(path, reducer: Ledger(), accounts: accounts, codec: codec, expected: entries)
      case "codable":
        result = try replayChronicle(path, reducer: CodableLedger(), accounts: accounts, codec: codec, expected: entries)
      case "macro":
        // The rows are about the generated conformance: fail if it does not read the ledger's bytes.
        let sample = Ledger.Action.transfer(from: "acct-00001", to: "acct-00002", cents: 5)
        let bytes = sample.cborBytes
        guard bytes.withUnsafeBytes({ MacroLedger.Action(cborBytes: $0) }) == MacroLedger.Action(sample) else {
          throw BenchError("the conformance @CBORCodable generated does not read the ledger's bytes: \(bytes)")
        }
        result = try replayChronicle(path, reducer: MacroLedger(), accounts: accounts, codec: codec, expected: entries)
      case let other:
        throw BenchError("actions must be cborcodable, codable or macro, not \(other)")
      }
    case "build-ledger":
      try Profiler.buildLog(at: try string("path"), length: try int("entries"), accounts: accounts)
      exit(0)
    case "codec-rounds":
      try codecRounds(count: try int("count", 200_000), rounds: try int("rounds", 5))
      exit(0)
    case "scan-lmdb":
      result = try scanLMDB(try string("path"), expected: try int("entries"))
    case "replay-grdb":
      result = try replayGRDB(try string("path"), accounts: accounts, expected: try int("entries"))
    case "profile-send":
      result = try profileSend(
        try string("path"), accounts: accounts, count: try int("count"),
        durability: parameters["durability"] == "full" ? .full : .normal, batch: try int("batch", 1))
    case "profile-reopen":
      result = try profileReopen(try string("path"), accounts: accounts, times: try int("count"))
    case "profile-state-at":
      result = try profileStateAt(try string("path"), accounts: accounts, queries: try int("count"))
    default:
      throw BenchError("unknown child kind \(kind)")
    }
    let line = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
    FileHandle.standardOutput.write(Data((ChildResult.marker + line + "\n").utf8))
    // Leave without closing: a store opened with another state schema would
    // otherwise write a snapshot of it on close, changing the log under test.
    exit(0)
  }

  /// Runs `body` while sampling memory.
  private static func measured(_ body: () throws -> Int) rethrows -> ChildResult {
    let baseline = ProcessMemory.residentAnonymous
    let sampler = AnonymousMemorySampler()
    var items = 0
    let elapsed = try seconds { items = try measuredSection(body) }
    let peakAnonymous = sampler.stop()
    return ChildResult(
      seconds: elapsed, items: items, peakResident: ProcessMemory.peakResident, peakAnonymous: peakAnonymous,
      baselineAnonymous: baseline)
  }

  /// W4: reopening a log with no usable snapshot (another state schema), so every entry is replayed.
  ///
  /// `reducer` is `Ledger` (actions decoded through `CBORCodable`),
  /// `CodableLedger` (the same entries decoded through `Codable`) or `MacroLedger`
  /// (through the conformance `@CBORCodable` generates).
  static func replayChronicle<R: Reducer>(
    _ path: String, reducer: R, accounts: Int, codec: PayloadCodec, expected: Int
  ) throws -> ChildResult where R.State: LedgerState {
    let initialState = R.State(LedgerWorkload(accounts: accounts).initialState)
    let options = ChronicleSystem.options(codec: codec, stateSchemaVersion: 2)
    var store: Store<R.State, R.Action>?
    let result = try measured {
      store = try ChronicleSystem.store(path, reducer: reducer, initialState: initialState, options: options)
      return store!.recovery.entriesReplayed
    }
    guard result.items == expected, store?.recovery.snapshotSeq == nil else {
      throw BenchError("replayed \(result.items) of \(expected) entries (snapshot \(String(describing: store?.recovery.snapshotSeq)))")
    }
    return result
  }

  /// Encodes and decodes the same ledger actions through `PayloadCodec.cbor` with each of the
  /// three conformances, alternating in rounds in one process, and prints the nanoseconds per
  /// action of each round: the codec's share of a batch and of a replay, side by side.
  static func codecRounds(count: Int, rounds: Int) throws {
    var workload = LedgerWorkload(accounts: 100)
    let actions = workload.nextActions(count)
    let codable = actions.map(CodableLedger.Action.init)
    let macro = actions.map(MacroLedger.Action.init)
    func time<A: Codable & Equatable>(_ name: String, _ values: [A]) throws {
      var payloads: [[UInt8]] = []
      payloads.reserveCapacity(values.count)
      let encode = try seconds { for value in values { payloads.append(try PayloadCodec.cbor.encode(value)) } }
      var decoded = 0
      let decode = try seconds {
        for payload in payloads {
          let value = try payload.withUnsafeBytes { try PayloadCodec.cbor.decode(A.self, from: $0) }
          if value == values[decoded] { decoded += 1 }
        }
      }
      guard decoded == values.count else { throw BenchError("\(name): \(decoded) of \(values.count) decoded equal") }
      let ns = { (seconds: Double) in String(format: "%.0f ns", seconds / Double(values.count) * 1e9) }
      print("\(name): encode \(ns(encode)), decode \(ns(decode))")
    }
    for round in 1...rounds {
      print("round \(round)")
      try time("hand-written CBORCodable", actions)
      try time("@CBORCodable", macro)
      try time("plain Codable", codable)
    }
  }

  /// W4's limit: a cursor over the raw LMDB environment.
  static func scanLMDB(_ path: String, expected: Int) throws -> ChildResult {
    let result = try measured {
      let raw = try RawLMDB(path, synced: false, valueSize: 1, readOnly: true)
      return try raw.scan()
    }
    guard result.items == expected else { throw BenchError("scanned \(result.items) of \(expected) entries") }
    return result
  }

  /// W4's peer: `SELECT` every event, decode it, fold it.
  static func replayGRDB(_ path: String, accounts: Int, expected: Int) throws -> ChildResult {
    let initialState = LedgerWorkload(accounts: accounts).initialState
    let result = try measured {
      let events = try GRDBEventStore(path, synchronous: "NORMAL", initialState: initialState, readOnly: true)
      return try events.replay()
    }
    guard result.items == expected else { throw BenchError("replayed \(result.items) of \(expected) rows") }
    return result
  }

  /// A profile of `send` (or of batches with `batch` > 1) into a new log at `path`.
  static func profileSend(_ path: String, accounts: Int, count: Int, durability: Durability, batch: Int) throws
    -> ChildResult
  {
    var workload = LedgerWorkload(accounts: accounts)
    let store = try ChronicleSystem.ledger(
      path, initialState: workload.initialState, options: ChronicleSystem.options(durability: durability))
    let batches = (0..<(count / batch)).map { _ in workload.nextActions(batch) }
    let result = try measured {
      for actions in batches {
        if batch == 1 { try store.send(actions[0]) } else { try store.send(contentsOf: actions) }
      }
      return count
    }
    try store.close()
    return result
  }

  /// A profile of reopening a log from its newest snapshot.
  static func profileReopen(_ path: String, accounts: Int, times: Int) throws -> ChildResult {
    let initialState = LedgerWorkload(accounts: accounts).initialState
    return try measured {
      for _ in 0..<times {
        let store = try ChronicleSystem.ledger(path, initialState: initialState, options: ChronicleSystem.options())
        try store.close()
      }
      return times
    }
  }

  /// A profile of `state(at:)` at random sequence numbers.
  static func profileStateAt(_ path: String, accounts: Int, queries: Int) throws -> ChildResult {
    let initialState = LedgerWorkload(accounts: accounts).initialState
    let store = try ChronicleSystem.ledger(path, initialState: initialState, options: ChronicleSystem.options())
    var random = SplitMix64(seed: 7)
    let last = store.lastSeq
    let seqs = (0..<queries).map { _ in 1 + random.next() % max(last - 1, 1) }
    let result = try measured {
      for seq in seqs { _ = try store.state(at: seq) }
      return queries
    }
    try store.close()
    return result
  }
}

/// Runs this executable as a child with `arguments` and returns what it measured.
///
/// - Parameters:
///   - wrapper: a command to run the child under (valgrind), found on the PATH.
///   - executable: another copy of this executable to run instead.
func runChild(_ arguments: [String], under wrapper: [String] = [], executable: String? = nil) throws -> ChildResult {
  let process = Process()
  let executable = try executable ?? selfExecutable()
  if wrapper.isEmpty {
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = ["--child"] + arguments
  } else {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = wrapper + [executable, "--child"] + arguments
  }
  let output = Pipe()
  let errorPath = FileManager.default.temporaryDirectory.appendingPathComponent("bench-child-\(UUID().uuidString).err")
  _ = FileManager.default.createFile(atPath: errorPath.path, contents: nil)
  defer { try? FileManager.default.removeItem(at: errorPath) }
  process.standardOutput = output
  process.standardError = try FileHandle(forWritingTo: errorPath)
  try process.run()
  let outputData = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let text = String(decoding: outputData, as: UTF8.self)
  guard process.terminationStatus == 0,
    let line = text.split(separator: "\n").last(where: { $0.hasPrefix(ChildResult.marker) })
  else {
    let stderrText = (try? String(contentsOf: errorPath, encoding: .utf8)) ?? ""
    throw BenchError(
      "child \(arguments.first ?? "") failed (status \(process.terminationStatus)): \(stderrText.suffix(2_000))")
  }
  return try JSONDecoder().decode(ChildResult.self, from: Data(line.dropFirst(ChildResult.marker.count).utf8))
}

/// The path of the running executable.
func selfExecutable() throws -> String {
  try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
}
