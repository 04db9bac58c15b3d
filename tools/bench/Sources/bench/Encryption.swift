import Chronicle
import Foundation

/// Encryption at rest against the same workloads in the clear: part of every full run,
/// and alone as `bench encryption [--quick]` (its table and targets on the terminal, no file written).
///
/// Rows: `send` (`.normal`, one action per send), batched appends (`send(contentsOf:)` of
/// ``Config/batchSize``) and replay (opening a store of ``replayLength`` entries without a
/// snapshot), each as entries per second encrypted and in the clear. Rounds alternate which goes
/// first; each round's encrypted ÷ clear ratio is recorded and the target reads the median ratio, so
/// that load from elsewhere spoils one round's pair rather than one side.
///
/// Keys: `enc.w1`, `enc.w3`, `enc.replay`, each `.clear`, `.encrypted` and `.ratio`.
struct EncryptionWorkloads {
  let config: Config

  var rounds: Int { config.quick ? 5 : 7 }
  var batches: Int { config.quick ? 50 : 200 }
  var replayLength: Int { config.quick ? 50_000 : 200_000 }
  /// The rows: key and what the row measures.
  static let rows = [("enc.w1", "send .normal"), ("enc.w3", "batched appends"), ("enc.replay", "replay")]

  /// `bench encryption [--quick]`, or `bench encryption profile batch|replay clear|encrypted [COUNT]`.
  static func main(_ arguments: [String]) throws {
    if arguments.first == "profile" { return try profile(Array(arguments.dropFirst())) }
    let config = try Config.parse(arguments)
    var results = Results()
    try withBenchRoot(config.scratchRoot, "encryption") { root in
      try EncryptionWorkloads(config: config).run(root: root, into: &results)
    }
    let report = Report(
      config: config, results: results, machine: Machine(scratch: config.scratchRoot),
      targets: results.encryptionTargets(), profiles: [], profileNote: nil)
    print(report.encryptionTable.markdown)
    print(report.targetTable.markdown)
  }

  /// One workload, once, for a profiler: `batch` sends COUNT actions (default 20,000) in batches of
  /// ``Config/batchSize`` into a new log; `replay` writes COUNT entries, then opens a store on them
  /// without a snapshot. The measured part runs in ``profiledBatches(_:_:)`` or
  /// ``profiledReplay(_:_:_:)``, for `valgrind --tool=callgrind --toggle-collect='*profiled*'`.
  static func profile(_ arguments: [String]) throws {
    guard arguments.count >= 2, ["batch", "replay"].contains(arguments[0]), ["clear", "encrypted"].contains(arguments[1])
    else { throw BenchError("usage: bench encryption profile batch|replay clear|encrypted [COUNT]") }
    let count = arguments.count > 2 ? Int(arguments[2]) ?? 20_000 : 20_000
    let config = try Config.parse([])
    var options = ChronicleSystem.options()
    options.keyRing = arguments[1] == "encrypted" ? try KeyRing([.random()]) : nil
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let batches = (0..<(count / config.batchSize)).map { _ in workload.nextActions(config.batchSize) }
    let dir = try Scratch(
      root: config.scratchRoot, name: "chronicle-bench-\(getpid())-encryption-profile-\(arguments[0])")
    defer { dir.remove() }
    let store = try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: options)
    if arguments[0] == "batch" {
      let elapsed = try seconds { try profiledBatches(store, batches) }
      try store.close()
      print("batch \(arguments[1]): \(rate(Double(count) / elapsed))")
      return
    }
    for actions in batches { try store.send(contentsOf: actions) }
    try store.close()
    let rates = try (0..<5).map { _ in
      // Each replay starts without a snapshot (the one before wrote one when it closed), and with the
      // log's pages on the disk: the kernel's writeback is not measured.
      let actionLog = try ActionLog(directory: dir.url, options: .init(keyRing: options.keyRing))
      try actionLog.pruneSnapshots(keepingLatest: 0)
      try actionLog.close()
      sync()
      return Double(count) / (try seconds { try profiledReplay(dir.path, initialState, options) })
    }
    print("replay \(arguments[1]): \(rate(median(rates))) (median of \(rates.map { rate($0) }.joined(separator: ", ")))")
  }

  @inline(never)
  static func profiledBatches(_ store: LedgerStore, _ batches: [[Ledger.Action]]) throws {
    for actions in batches { try store.send(contentsOf: actions) }
  }

  @inline(never)
  static func profiledReplay(_ path: String, _ initialState: Ledger.State, _ options: StoreOptions) throws {
    let store = try ChronicleSystem.store(path, reducer: Ledger(), initialState: initialState, options: options)
    try store.close()
  }

  func run(root: URL, into results: inout Results) throws {
    let ring = try KeyRing([.random()])
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let sends = workload.nextActions(config.singleSends)
    let batched = (0..<batches).map { _ in workload.nextActions(config.batchSize) }
    var replayActions: [[Ledger.Action]] = []
    for _ in 0..<(replayLength / config.batchSize) { replayActions.append(workload.nextActions(config.batchSize)) }

    func options(_ encrypted: Bool) -> StoreOptions {
      var options = ChronicleSystem.options()
      options.keyRing = encrypted ? ring : nil
      return options
    }
    func fresh(_ name: String, _ encrypted: Bool, _ body: (LedgerStore) throws -> Void) throws -> Double {
      let dir = try Scratch(root: root, name: name)
      defer { dir.remove() }
      let store = try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: options(encrypted))
      defer { try? store.close() }
      return try seconds { try body(store) }
    }
    for round in 0..<rounds {
      var rates: [Bool: [String: Double]] = [:]
      for encrypted in round % 2 == 0 ? [false, true] : [true, false] {
        let suffix = encrypted ? "encrypted" : "clear"
        let single = try fresh("enc-w1-\(suffix)", encrypted) { store in for action in sends { try store.send(action) } }
        let batch = try fresh("enc-w3-\(suffix)", encrypted) { store in
          for actions in batched { try store.send(contentsOf: actions) }
        }
        // Replay: a log of replayLength entries without snapshots, opened by a new store.
        let dir = try Scratch(root: root, name: "enc-replay-\(suffix)")
        defer { dir.remove() }
        let writer = try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: options(encrypted))
        for actions in replayActions { try writer.send(contentsOf: actions) }
        try writer.close()
        let actionLog = try ActionLog(directory: dir.url, options: .init(keyRing: encrypted ? ring : nil))
        try actionLog.pruneSnapshots(keepingLatest: 0)
        try actionLog.close()
        // The log just written reaches the disk first: the kernel's writeback is not part of the replay.
        sync()
        var reopened: LedgerStore?
        let replay = try seconds {
          reopened = try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: options(encrypted))
        }
        try reopened?.close()
        let measured = [
          "enc.w1": Double(sends.count) / single, "enc.w3": Double(batches * config.batchSize) / batch,
          "enc.replay": Double(replayActions.count * config.batchSize) / replay,
        ]
        for (key, value) in measured { results.add("\(key).\(suffix)", value) }
        rates[encrypted] = measured
        log("  encryption round \(round + 1) \(suffix): send \(rate(measured["enc.w1"])), batched \(rate(measured["enc.w3"])), replay \(rate(measured["enc.replay"]))")
      }
      if let on = rates[true], let off = rates[false] {
        for (key, _) in Self.rows { results.add("\(key).ratio", on[key]! / off[key]!) }
      }
    }
  }
}

extension Report {
  /// Encryption at rest: each workload encrypted and in the clear.
  var encryptionTable: Table {
    var table = Table("figure", "encrypted", "in the clear", "encrypted ÷ clear")
    let workloads = EncryptionWorkloads(config: config)
    let names = [
      "enc.w1": "`send`, `.normal` (ledger, \(grouped(Double(config.singleSends))) into a new log)",
      "enc.w3": "`send(contentsOf:)` ×\(grouped(Double(config.batchSize))), `.normal` (\(grouped(Double(workloads.batches))) batches into a new log)",
      "enc.replay": "replay: opening a store of \(grouped(Double(workloads.replayLength))) entries without a snapshot",
    ]
    for (key, _) in EncryptionWorkloads.rows {
      table.add(
        names[key]!, rate(results["\(key).encrypted"]), rate(results["\(key).clear"]),
        results["\(key).ratio"].map(percent) ?? "–")
    }
    return table
  }
}

extension Results {
  /// Encryption at rest's targets: each workload encrypted ≥ 85 % of its rate in the clear.
  func encryptionTargets() -> [Target] {
    EncryptionWorkloads.rows.map { key, name in
      let share = self["\(key).ratio"]
      return Target(
        name: "\(name) encrypted ≥ 85 % of the rate in the clear",
        measured: share.map { "\(percent($0)) (\(rate(self["\(key).encrypted"])) vs \(rate(self["\(key).clear"])))" } ?? "–",
        passed: share.map { $0 >= 0.85 }, profile: nil)
    }
  }
}
