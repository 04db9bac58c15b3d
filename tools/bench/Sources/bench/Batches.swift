import Chronicle
import Foundation

/// `bench batches`: W3 (`send(contentsOf:)` of ``Config/batchSize``, `.normal`, into a new log) with
/// the ledger's three conformances (hand-written `CBORCodable`, `@CBORCodable`, plain `Codable`), in
/// alternating rounds in one process, printed, no file written. `bench batches profile KIND [COUNT]`
/// sends COUNT actions of one conformance once, for `perf record`.
struct BatchRounds {
  static let usage = """
    usage: bench batches [--quick] [--rounds N]            the three conformances' W3 batches, alternating
           bench batches profile hand|macro|codable [COUNT] COUNT actions (default 400,000) in batches, once
    """

  /// The conformances, by the name the output and `profile` use.
  static let kinds = ["hand", "macro", "codable"]

  static func main(_ arguments: [String]) throws {
    if arguments.first == "profile" {
      guard arguments.count >= 2, kinds.contains(arguments[1]) else { throw BenchError(usage) }
      let count = arguments.count > 2 ? Int(arguments[2]) ?? 400_000 : 400_000
      let config = try Config.parse([])
      var workload = LedgerWorkload(accounts: config.accounts)
      let initialState = workload.initialState
      let batches = (0..<(count / config.batchSize)).map { _ in workload.nextActions(config.batchSize) }
      try withBenchRoot(config.scratchRoot, "batches-profile") { root in
        print("\(arguments[1]): \(rate(try sendBatches(arguments[1], batches, initialState, root: root)))")
      }
      return
    }
    var rest = arguments
    let rounds = try Config.takeRounds(from: &rest, usage: usage)
    let config = try Config.parse(rest)
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let batches = (0..<config.codableBatches).map { _ in workload.nextActions(config.batchSize) }
    var rates: [String: [Double]] = [:]
    try withBenchRoot(config.scratchRoot, "batches") { root in
      for round in 0..<rounds {
        // Each round starts with a different conformance, so that no one always runs first.
        let order = kinds.indices.map { kinds[($0 + round) % kinds.count] }
        var line: [String] = []
        for kind in order {
          let value = try sendBatches(kind, batches, initialState, root: root)
          rates[kind, default: []].append(value)
          line.append("\(kind) \(rate(value))")
        }
        print("round \(round + 1): " + line.joined(separator: ", "))
      }
    }
    print("median of \(rounds) rounds: " + kinds.map { "\($0) \(rate(median(rates[$0] ?? [])))" }.joined(separator: ", "))
  }

  /// Sends `batches` with the conformance `kind` into a new log under `root`; returns actions per second.
  static func sendBatches(_ kind: String, _ batches: [[Ledger.Action]], _ initialState: Ledger.State, root: URL) throws
    -> Double
  {
    let count = Double(batches.count * (batches.first?.count ?? 0))
    switch kind {
    case "hand": return count / (try timedBatches(Ledger(), batches, initialState, root: root))
    case "macro":
      let actions = batches.map { $0.map(MacroLedger.Action.init) }
      return count / (try timedBatches(MacroLedger(), actions, MacroLedger.State(initialState), root: root))
    default:
      let actions = batches.map { $0.map(CodableLedger.Action.init) }
      return count / (try timedBatches(CodableLedger(), actions, CodableLedger.State(initialState), root: root))
    }
  }

  @inline(never)
  static func timedBatches<R: Reducer>(_ reducer: R, _ batches: [[R.Action]], _ initialState: R.State, root: URL) throws
    -> Double
  {
    let dir = try Scratch(root: root, name: "batches")
    defer { dir.remove() }
    let store = try ChronicleSystem.store(dir.path, reducer: reducer, initialState: initialState, options: ChronicleSystem.options())
    defer { try? store.close() }
    return try seconds { for actions in batches { try store.send(contentsOf: actions) } }
  }
}
