import Chronicle
import Foundation

/// Encryption at rest against the same workloads in the clear: `bench encryption [--quick]`.
///
/// Rows: `send` (`.normal`, one action per send), batched appends (`send(contentsOf:)` of
/// ``Config/batchSize``) and replay (opening a store of ``replayLength`` entries without a
/// snapshot), each as entries per second encrypted and in the clear, and the ratio; rounds
/// alternate which goes first, and the medians are printed.
enum EncryptionWorkloads {
  static func main(_ arguments: [String]) throws {
    let config = try Config.parse(arguments)
    let quick = config.quick
    let rounds = quick ? 3 : 5
    let batches = quick ? 50 : 200
    let replayLength = quick ? 50_000 : 200_000
    let ring = try KeyRing([.random()])
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let sends = workload.nextActions(config.singleSends)
    let batched = (0..<batches).map { _ in workload.nextActions(config.batchSize) }
    var replayActions: [[Ledger.Action]] = []
    for _ in 0..<(replayLength / config.batchSize) { replayActions.append(workload.nextActions(config.batchSize)) }
    let root = config.scratchRoot.appendingPathComponent("chronicle-bench-\(getpid())-encryption", isDirectory: true)
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }

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
    var rows: [String: [Double]] = [:]
    for round in 0..<rounds {
      for encrypted in round % 2 == 0 ? [false, true] : [true, false] {
        let suffix = encrypted ? "encrypted" : "clear"
        let single = try fresh("enc-w1-\(suffix)", encrypted) { store in for action in sends { try store.send(action) } }
        rows["send .normal \(suffix)", default: []].append(Double(sends.count) / single)
        let batch = try fresh("enc-w3-\(suffix)", encrypted) { store in
          for actions in batched { try store.send(contentsOf: actions) }
        }
        rows["batched appends \(suffix)", default: []].append(Double(batches * config.batchSize) / batch)
        // Replay: a log of replayLength entries without snapshots, opened by a new store.
        let dir = try Scratch(root: root, name: "enc-replay-\(suffix)")
        defer { dir.remove() }
        let writer = try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: options(encrypted))
        for actions in replayActions { try writer.send(contentsOf: actions) }
        try writer.close()
        let actionLog = try ActionLog(directory: dir.url, options: .init(keyRing: encrypted ? ring : nil))
        try actionLog.pruneSnapshots(keepingLatest: 0)
        try actionLog.close()
        var reopened: LedgerStore?
        let replay = try seconds {
          reopened = try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: options(encrypted))
        }
        try reopened?.close()
        rows["replay \(suffix)", default: []].append(Double(replayActions.count * config.batchSize) / replay)
        log("  encryption round \(round + 1) \(suffix): send \(rate(Double(sends.count) / single)), batched \(rate(Double(batches * config.batchSize) / batch)), replay \(rate(Double(replayActions.count * config.batchSize) / replay))")
      }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print("| workload | clear (entries/s) | encrypted (entries/s) | encrypted / clear |")
    print("|---|---:|---:|---:|")
    for name in ["send .normal", "batched appends", "replay"] {
      let clear = median(rows["\(name) clear"] ?? [0])
      let encrypted = median(rows["\(name) encrypted"] ?? [0])
      print("| \(name) | \(grouped(clear)) | \(grouped(encrypted)) | \(String(format: "%.0f %%", 100 * encrypted / clear)) |")
    }
  }
}
