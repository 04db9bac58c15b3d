import ChronicleLog
import Foundation

/// A workload profiled with `valgrind --tool=callgrind` when a target it decides is missed.
enum ProfileKind: String, CaseIterable, Sendable {
  case sendNormal, sendFull, batch, replay, reopen, stateAt, sendLargeState

  var title: String {
    switch self {
    case .sendNormal: "`send`, `.normal`, 100 accounts (W1)"
    case .sendFull: "`send`, `.full` (W2): instructions only, the fsync wait is not counted"
    case .batch: "`send(contentsOf:)`, batches of 1,000 (W3)"
    case .replay: "replay of a log without a usable snapshot, CBOR (W4)"
    case .reopen: "reopen from the newest snapshot (W5)"
    case .stateAt: "`state(at:)` at random sequence numbers (W6)"
    case .sendLargeState: "`send`, `.normal`, 10,000-account state (W9)"
    }
  }

  /// Sizes under callgrind (which runs code about 50 times slower).
  func sizes(quick: Bool) -> (count: Int, logLength: Int) {
    let scale = quick ? 2 : 1
    switch self {
    case .sendNormal: return (2_000 / scale, 0)
    case .sendFull: return (200 / scale, 0)
    case .batch: return (10_000 / scale, 0)
    case .replay: return (0, 20_000 / scale)
    case .reopen: return (20 / scale, 20_000 / scale)
    case .stateAt: return (10 / scale, 20_000 / scale)
    case .sendLargeState: return (1_000 / scale, 0)
    }
  }
}

/// Where one profiled workload spends its instructions.
struct ProfileReport: Sendable {
  struct Line: Sendable {
    var share: Double
    var function: String
    /// The shared object it lives in (`bench` for the executable: Chronicle and its static dependencies).
    var library = ""
  }

  var kind: ProfileKind
  var description: String
  var totalInstructions: Int
  /// Functions by the instructions executed in their own code.
  var exclusive: [Line]
  /// Functions by the instructions executed in them and everything they call.
  var inclusive: [Line]
  /// The self cost summed per shared object.
  var libraries: [Line]
}

enum Profiler {
  /// Whether valgrind, callgrind_annotate and objcopy are installed.
  static var isAvailable: Bool {
    ["valgrind", "callgrind_annotate", "objcopy"].allSatisfy { command(["which", $0]) != nil }
  }

  /// Runs `kind` in a child under callgrind, counting only `measuredSection`, and summarizes the result.
  static func profile(_ kind: ProfileKind, config: Config, scratch: URL) throws -> ProfileReport {
    let (count, length) = kind.sizes(quick: config.quick)
    let dir = try Scratch(root: scratch, name: "profile-\(kind.rawValue)")
    defer { dir.remove() }
    let logDir = dir.file("log")
    if length > 0 { try buildLog(at: logDir, length: length, accounts: config.accounts) }

    var arguments: [String]
    var description: String
    switch kind {
    case .sendNormal:
      arguments = ["profile-send", "count=\(count)"]
      description = "\(grouped(Double(count))) sends into a new log, 100 accounts"
    case .sendFull:
      arguments = ["profile-send", "count=\(count)", "durability=full"]
      description = "\(grouped(Double(count))) synced sends into a new log, 100 accounts"
    case .batch:
      arguments = ["profile-send", "count=\(count)", "batch=1000"]
      description = "\(grouped(Double(count / 1_000))) batches of 1,000 into a new log"
    case .replay:
      arguments = ["replay-chronicle", "codec=cbor", "entries=\(length)"]
      description = "reopening a \(grouped(Double(length)))-entry log with another state schema version"
    case .reopen:
      arguments = ["profile-reopen", "count=\(count)"]
      description = "\(count) reopens of a \(grouped(Double(length)))-entry log"
    case .stateAt:
      arguments = ["profile-state-at", "count=\(count)"]
      description = "\(count) queries in a \(grouped(Double(length)))-entry log"
    case .sendLargeState:
      arguments = ["profile-send", "count=\(count)", "accounts=10000"]
      description = "\(grouped(Double(count))) sends into a new log, 10,000 accounts"
    }
    arguments.append("path=\(logDir)")
    if !arguments.contains(where: { $0.hasPrefix("accounts=") }) { arguments.append("accounts=\(config.accounts)") }

    // valgrind 3.19 cannot read the DWARF 5 debug information Swift emits: profile
    // a copy without it (the symbol table, which names the functions, stays).
    let binary = dir.file("bench")
    guard command(["objcopy", "--strip-debug", try selfExecutable(), binary]) != nil else {
      throw BenchError("objcopy --strip-debug failed: binutils are needed to profile")
    }
    let output = dir.file("callgrind.out")
    log("  profiling \(kind.rawValue) under callgrind: \(description)")
    _ = try runChild(
      arguments,
      under: [
        "valgrind", "--tool=callgrind", "--callgrind-out-file=\(output)", "--toggle-collect=*measuredSection*",
      ],
      executable: binary)
    let selfLines = try lines(output, inclusive: false)
    var perLibrary: [String: Double] = [:]
    for line in selfLines { perLibrary[line.library, default: 0] += line.share }
    return ProfileReport(
      kind: kind, description: description, totalInstructions: try total(output),
      exclusive: Array(selfLines.prefix(15)), inclusive: try inclusiveLines(output),
      libraries: perLibrary.map { ProfileReport.Line(share: $0.value, function: $0.key) }.sorted { $0.share > $1.share })
  }

  /// A closed ledger log of `length` entries ending on a snapshot.
  static func buildLog(at path: String, length: Int, accounts: Int) throws {
    var workload = LedgerWorkload(accounts: accounts)
    let store = try ChronicleSystem.ledger(path, initialState: workload.initialState, options: ChronicleSystem.options())
    var count = 0
    while count < length {
      let n = min(1_000, length - count)
      try store.send(contentsOf: workload.nextActions(n))
      count += n
    }
    try store.close()
  }

  private static func annotated(_ file: String, inclusive: Bool) throws -> String {
    guard
      let text = command([
        "callgrind_annotate", "--auto=no", "--threshold=100", "--inclusive=\(inclusive ? "yes" : "no")", file,
      ])
    else { throw BenchError("callgrind_annotate failed on \(file)") }
    return command(["swift", "demangle", "--simplified"], input: Data(text.utf8)) ?? text
  }

  private static func total(_ file: String) throws -> Int {
    let text = try annotated(file, inclusive: false)
    for line in text.split(separator: "\n") where line.contains("PROGRAM TOTALS") {
      return Int(line.split(separator: " ").first?.replacingOccurrences(of: ",", with: "") ?? "") ?? 0
    }
    return 0
  }

  /// Every function of callgrind_annotate's listing, with its share of the total, largest first.
  private static func lines(_ file: String, inclusive: Bool) throws -> [ProfileReport.Line] {
    try annotated(file, inclusive: inclusive).split(separator: "\n").compactMap(parse)
  }

  /// The top inclusive costs, leaving out the frames around the whole section
  /// and keeping one function of each chain of wrappers that share a cost.
  private static func inclusiveLines(_ file: String, limit: Int = 20) throws -> [ProfileReport.Line] {
    var kept: [ProfileReport.Line] = []
    for line in try lines(file, inclusive: true) {
      if line.share > 99 || line.function.contains("measuredSection") { continue }
      if let last = kept.last, abs(last.share - line.share) < 0.05 { continue }
      kept.append(line)
      if kept.count == limit { break }
    }
    return kept
  }

  /// Parses `1,234 (12.34%)  file:function [object]`.
  private static func parse(_ raw: Substring) -> ProfileReport.Line? {
    let text = raw.trimmingCharacters(in: .whitespaces)
    guard let open = text.firstIndex(of: "("), let close = text.firstIndex(of: ")"), open < close,
      text[..<open].trimmingCharacters(in: .whitespaces).allSatisfy({ $0.isNumber || $0 == "," }),
      let share = Double(text[text.index(after: open)..<close].trimmingCharacters(in: .whitespaces).dropLast())
    else { return nil }
    var location = text[text.index(after: close)...].trimmingCharacters(in: .whitespaces)
    if location.hasPrefix("PROGRAM TOTALS") { return nil }
    var object = ""
    if location.hasSuffix("]"), let bracket = location.range(of: " [", options: .backwards) {
      object = String(location[bracket.upperBound..<location.index(before: location.endIndex)])
      location = String(location[..<bracket.lowerBound])
    }
    // `file:function`: the file never holds a colon, a Swift name may.
    var function = location
    if let colon = location.firstIndex(of: ":") { function = String(location[location.index(after: colon)...]) }
    if function.hasPrefix("0x") { function = "(unknown)" }
    if function.count > 140 { function = function.prefix(139) + "…" }
    let library = object.split(separator: "/").last.map(String.init) ?? ""
    if !library.isEmpty, library != "bench" { function += " — \(library)" }
    guard !function.isEmpty else { return nil }
    return ProfileReport.Line(share: share, function: function, library: library)
  }
}
