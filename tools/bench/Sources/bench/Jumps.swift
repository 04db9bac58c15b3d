import Chronicle
import Foundation

/// `bench jumps`: rebuilding states over restore, undo and redo entries, at
/// growing sizes, so that the growth (linear, or not) shows in the table.
///
/// - plain: 2N sends, dropped without `close()` and never snapshotted, reopened: the fold alone, for scale;
/// - reopen: N pairs of (send, undo), closed, reopened with another
///   `stateSchemaVersion` (every snapshot unusable: the whole log is folded);
/// - killed: N pairs, dropped without `close()` and never snapshotted, reopened;
/// - restores: a live store where half of N calls are `restore(to:)` a random
///   earlier entry (the other half sends), then 20 random `state(at:)`.
enum Jumps {
  static let usage = """
    usage: bench jumps [--sizes N,N,...] [--scratch DIR]

    Times recovery, restore and state(at:) over logs full of undo and restore
    entries, for each size N (default 10,20,100,1000,10000), and prints seconds
    and microseconds per item (entries folded by a reopen, calls, queries):
    per-item times that do not grow with N mean linear work.
    """

  /// A counter whose every state differs.
  struct Adder: Reducer {
    typealias State = [Int]
    enum Action: Codable, Sendable { case add(Int) }
    func reduce(into state: inout [Int], action: Action) -> Effect<Action> {
      if case .add(let value) = action { state.append(value) }
      return .none
    }
  }

  static func run(_ arguments: [String]) throws {
    var sizes = [10, 20, 100, 1_000, 10_000]
    var scratch = FileManager.default.temporaryDirectory
    var index = 0
    while index < arguments.count {
      switch arguments[index] {
      case "--sizes" where index + 1 < arguments.count:
        index += 1
        sizes = arguments[index].split(separator: ",").compactMap { Int($0) }
        guard !sizes.isEmpty, sizes.allSatisfy({ $0 > 0 }) else { throw BenchError("--sizes needs positive integers") }
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
    print("workload   N          items      seconds     µs/item")
    for size in sizes {
      let plain = try pairs(size, killed: true, undoing: false, scratch: scratch)
      row("plain", size, entries: 2 * size, plain)
      let reopen = try pairs(size, killed: false, scratch: scratch)
      row("reopen", size, entries: 2 * size, reopen)
      let killed = try pairs(size, killed: true, scratch: scratch)
      row("killed", size, entries: 2 * size, killed)
      let (restores, queries) = try restoreHeavy(size, scratch: scratch)
      row("restores", size, entries: size, restores)
      row("state(at:)", size, entries: 20, queries)
    }
  }

  private static func row(_ name: String, _ size: Int, entries: Int, _ seconds: Double) {
    func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
    let perEntry = seconds * 1e6 / Double(max(entries, 1))
    print(
      pad(name, 11) + pad(String(size), 11) + pad(String(entries), 11) + pad(String(format: "%.4f", seconds), 12)
        + String(format: "%.2f", perEntry))
  }

  private static func directory(_ scratch: URL) -> URL {
    scratch.appendingPathComponent("chronicle-bench-jumps-\(UUID().uuidString)")
  }

  /// Seconds to reopen a log of `count` (send, undo) pairs (two sends without `undoing`).
  private static func pairs(_ count: Int, killed: Bool, undoing: Bool = true, scratch: URL) throws -> Double {
    let url = directory(scratch)
    defer { try? FileManager.default.removeItem(at: url) }
    // Killed: no snapshot at all (none every 1,000 entries either), so that the whole log is folded.
    var options = StoreOptions(snapshotEvery: killed ? 0 : 1_000)
    do {
      let store = try Store(initialState: [], reducer: Adder(), log: .directory(url), options: options)
      for value in 0..<count {
        try store.send(.add(value))
        if undoing { try store.undo() } else { try store.send(.add(-value)) }
      }
      if killed { try store.flush() } else { try store.close() }
    }
    if !killed { options.stateSchemaVersion = 2 }
    let start = ContinuousClock.now
    let store = try Store(initialState: [], reducer: Adder(), log: .directory(url), options: options)
    let seconds = (ContinuousClock.now - start).seconds
    guard store.lastSeq == UInt64(2 * count), store.state.count == (undoing ? 0 : 2 * count) else {
      throw BenchError("jumps: the reopened log holds \(store.lastSeq) entries and state \(store.state.count)")
    }
    try store.close()
    return seconds
  }

  /// Seconds for `count` calls, half of them restores to a random earlier entry, and for 20 `state(at:)`.
  private static func restoreHeavy(_ count: Int, scratch: URL) throws -> (Double, Double) {
    let url = directory(scratch)
    defer { try? FileManager.default.removeItem(at: url) }
    var random = SystemRandomNumberGenerator()
    let store = try Store(initialState: [], reducer: Adder(), log: .directory(url))
    let start = ContinuousClock.now
    for value in 0..<count {
      if value % 2 == 0 {
        try store.send(.add(value))
      } else {
        try store.restore(to: UInt64.random(in: 0...store.lastSeq, using: &random))
      }
    }
    let calls = (ContinuousClock.now - start).seconds
    let queries = ContinuousClock.now
    for _ in 0..<20 { _ = try store.state(at: UInt64.random(in: 0...store.lastSeq, using: &random)) }
    let seconds = (ContinuousClock.now - queries).seconds
    try store.close()
    return (calls, seconds)
  }
}
