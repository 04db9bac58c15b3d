import Chronicle
import ChronicleLog
import Foundation

/// Runs every workload `config.runs` times and collects the samples.
struct Runner {
  let config: Config
  var results = Results()
  /// The size of one Chronicle entry for the ledger's transfers: the raw LMDB values have this size.
  let entrySize: Int

  init(config: Config) throws {
    self.config = config
    var workload = LedgerWorkload(accounts: config.accounts)
    entrySize = try ChronicleSystem.entrySize(of: workload.nextAction())
  }

  mutating func run() throws {
    for run in 1...config.runs {
      try withBenchRoot(config.scratchRoot, "\(run)") { root in
        log("run \(run) of \(config.runs), logs in a temporary directory")
        try singleSends(root: root)
        try syncedSends(root: root)
        try syncedBatches(root: root)
        try codableBatches(root: root)
        try stateSizes(root: root)
        try growth(root: root)
        try TreeWorkloads(config: config).run(root: root, into: &results)
        try ConcurrentWorkloads(config: config).run(root: root, into: &results)
        try EncryptionWorkloads(config: config).run(root: root, into: &results)
      }
    }
  }

  // MARK: - W1: one send per transaction, .normal

  private mutating func singleSends(root: URL) throws {
    let count = config.singleSends
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let actions = workload.nextActions(count)
    let codableActions = actions.map(CodableLedger.Action.init)

    try measureStore("w1.chronicle", Ledger(), initialState: initialState, count: count, root: root) { store in
      for action in actions { try store.send(action) }
    }
    try measureStore(
      "w1.chronicle.codable", CodableLedger(), initialState: CodableLedger.State(initialState), count: count, root: root
    ) { store in
      for action in codableActions { try store.send(action) }
    }
    try measureStore("w1.counter", Counter(), initialState: Counter.State(), count: count, root: root) { store in
      for _ in 0..<count { try store.send(.increment) }
    }
    try measure("w1.raw", count: count, root: root) { [entrySize] dir in
      let raw = try RawLMDB(dir.path, synced: false, valueSize: entrySize)
      defer { raw.close() }
      return try seconds { for _ in 0..<count { try raw.putOne() } }
    }
    try measure("w1.grdb", count: count, root: root) { dir in
      let events = try GRDBEventStore(dir.file("events.sqlite"), synchronous: "NORMAL", initialState: initialState)
      defer { try? events.close() }
      return try seconds { for action in actions { try events.send(action) } }
    }
    try measureJSONFile("w1.json", actions: actions, initialState: initialState, synced: false, root: root)
  }

  // MARK: - W2: one send per transaction, .full

  private mutating func syncedSends(root: URL) throws {
    let count = config.syncedSends
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let actions = workload.nextActions(count)

    try measureStore(
      "w2.chronicle", Ledger(), initialState: initialState, count: count, durability: .full, root: root
    ) { store in
      for action in actions { try store.send(action) }
    }
    try measure("w2.raw", count: count, root: root) { [entrySize] dir in
      let raw = try RawLMDB(dir.path, synced: true, valueSize: entrySize)
      defer { raw.close() }
      return try seconds { for _ in 0..<count { try raw.putOne() } }
    }
    try measure("w2.grdb", count: count, root: root) { dir in
      let events = try GRDBEventStore(dir.file("events.sqlite"), synchronous: "FULL", initialState: initialState)
      defer { try? events.close() }
      return try seconds { for action in actions { try events.send(action) } }
    }
    try measureJSONFile("w2.json", actions: actions, initialState: initialState, synced: true, root: root)
  }

  // MARK: - W3 with .full: synced batches (the .normal batches are measured while the logs grow)

  private mutating func syncedBatches(root: URL) throws {
    let batches = config.syncedBatches
    let size = config.batchSize
    let count = batches * size
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let actions = (0..<batches).map { _ in workload.nextActions(size) }

    try measureStore(
      "w3full.chronicle", Ledger(), initialState: initialState, count: count, durability: .full, root: root
    ) { store in
      for batch in actions { try store.send(contentsOf: batch) }
    }
    try measure("w3full.raw", count: count, root: root) { [entrySize] dir in
      let raw = try RawLMDB(dir.path, synced: true, valueSize: entrySize)
      defer { raw.close() }
      return try seconds { for _ in 0..<batches { try raw.putBatch(size) } }
    }
    try measure("w3full.grdb", count: count, root: root) { dir in
      let events = try GRDBEventStore(dir.file("events.sqlite"), synchronous: "FULL", initialState: initialState)
      defer { try? events.close() }
      return try seconds { for batch in actions { try events.send(contentsOf: batch) } }
    }
  }

  // MARK: - W3 with Codable-only actions: .normal batches into an empty log

  /// The ledger's `.normal` batches with plain-`Codable` actions, into a log of
  /// their own (the `CBORCodable` ledger's batches are measured while the logs grow).
  private mutating func codableBatches(root: URL) throws {
    let batches = config.codableBatches
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let ledgerActions = (0..<batches).map { _ in workload.nextActions(config.batchSize) }
    let actions = ledgerActions.map { $0.map(CodableLedger.Action.init) }
    let macroActions = ledgerActions.map { $0.map(MacroLedger.Action.init) }

    try measureStore(
      "w3.chronicle.codable", CodableLedger(), initialState: CodableLedger.State(initialState), count: batches * config.batchSize,
      root: root
    ) { store in
      for batch in actions { try store.send(contentsOf: batch) }
    }
    // The same batches with the conformance `@CBORCodable` generates.
    try measureStore(
      "w3.chronicle.macro", MacroLedger(), initialState: MacroLedger.State(initialState), count: batches * config.batchSize,
      root: root
    ) { store in
      for batch in macroActions { try store.send(contentsOf: batch) }
    }
  }

  // MARK: - W9: W1 at growing state sizes

  private mutating func stateSizes(root: URL) throws {
    for size in config.stateSizes {
      var workload = LedgerWorkload(accounts: size, seed: UInt64(size))
      let initialState = workload.initialState
      let actions = workload.nextActions(config.stateSends)
      try measureStore(
        "w9.chronicle@\(size)", Ledger(), initialState: initialState, count: actions.count, root: root
      ) { store in
        for action in actions { try store.send(action) }
      }
      try measureJSONFile(
        "w9.json@\(size)", actions: actions, initialState: initialState, synced: false, root: root)
    }
  }

  // MARK: - Growth: W3 batches, then at each length W4–W8, bytes per entry and W1 appends

  private mutating func growth(root: URL) throws {
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let cbor = try Scratch(root: root, name: "chronicle-cbor")
    let json = try Scratch(root: root, name: "chronicle-json")
    let rawDir = try Scratch(root: root, name: "raw-lmdb")
    let grdbDir = try Scratch(root: root, name: "grdb")
    let grdbPath = grdbDir.file("events.sqlite")
    defer { [cbor, json, rawDir, grdbDir].forEach { $0.remove() } }

    func openCBOR() throws -> LedgerStore {
      try ChronicleSystem.ledger(cbor.path, initialState: initialState, options: ChronicleSystem.options())
    }
    // The JSON-codec log only serves W4's JSON replay: it holds the entries a
    // store with `codec: .json` writes, appended straight to the log (a store
    // would take minutes more to build it, and its snapshots would be ignored).
    func openJSON() throws -> ActionLog {
      try ActionLog(directory: json.url, options: .init(durability: .normal, flushInterval: nil))
    }
    func appendJSON(_ log: ActionLog, _ actions: [Ledger.Action]) throws {
      try log.append(
        contentsOf: try actions.map { try NewEntry(encoding: $0, typeName: $0.typeName, codec: .json) })
    }
    func openRaw() throws -> RawLMDB { try RawLMDB(rawDir.path, synced: false, valueSize: entrySize) }
    func openGRDB() throws -> GRDBEventStore {
      try GRDBEventStore(grdbPath, synchronous: "NORMAL", initialState: initialState)
    }

    var cborStore = try openCBOR()
    var jsonLog = try openJSON()
    var raw = try openRaw()
    var events = try openGRDB()
    var count = 0
    var batched = 0
    var total = ["chronicle": 0.0, "raw": 0.0, "grdb": 0.0]

    for length in config.lengths {
      var segment = ["chronicle": 0.0, "raw": 0.0, "grdb": 0.0]
      let start = count
      while count < length {
        let n = min(config.batchSize, length - count)
        let actions = workload.nextActions(n)
        segment["chronicle"]! += try seconds { try cborStore.send(contentsOf: actions) }
        segment["raw"]! += try seconds { try raw.putBatch(n) }
        segment["grdb"]! += try seconds { try events.send(contentsOf: actions) }
        try appendJSON(jsonLog, actions)
        count += n
      }
      batched += count - start
      for (system, time) in segment {
        total[system]! += time
        results.add("w3.\(system)@\(length)", Double(count - start) / time)
      }
      log("  built \(length) entries (W3 batches: \(rate(Double(count - start) / segment["chronicle"]!)) Chronicle)")

      // Closed: what is on disk, then replays in fresh processes.
      try cborStore.close()
      try jsonLog.close()
      raw.close()
      try events.close()
      results.add("bytes.chronicle@\(length)", Double(fileSize(cbor.file("data.mdb"))) / Double(count))
      results.add("bytes.json@\(length)", Double(fileSize(json.file("data.mdb"))) / Double(count))
      results.add("bytes.raw@\(length)", Double(fileSize(rawDir.file("data.mdb"))) / Double(count))
      results.add(
        "bytes.grdb@\(length)",
        Double(fileSize(grdbPath) + fileSize(grdbPath + "-wal")) / Double(count))

      let replays: [(String, [String])] = [
        ("chronicle", ["replay-chronicle", "path=\(cbor.path)", "codec=cbor"]),
        ("chronicle.codable", ["replay-chronicle", "path=\(cbor.path)", "codec=cbor", "actions=codable"]),
        ("chronicle.macro", ["replay-chronicle", "path=\(cbor.path)", "codec=cbor", "actions=macro"]),
        ("json", ["replay-chronicle", "path=\(json.path)", "codec=json"]),
        ("raw", ["scan-lmdb", "path=\(rawDir.path)"]),
        ("grdb", ["replay-grdb", "path=\(grdbPath)"]),
      ]
      for (system, arguments) in replays {
        let result = try runChild(arguments + ["entries=\(count)", "accounts=\(config.accounts)"])
        results.add("w4.rate.\(system)@\(length)", Double(result.items) / result.seconds)
        results.add("w4.seconds.\(system)@\(length)", result.seconds)
        results.add("w8.rss.\(system)@\(length)", Double(result.peakResident))
        results.add("w8.anon.\(system)@\(length)", Double(result.peakAnonymous))
      }
      log("  replayed \(length): \(rate(results["w4.rate.chronicle", at: length] ?? 0)) Chronicle CBOR")

      // W7: verify, read-only.
      let reader = try ActionLog(directory: cbor.url, access: .readOnly)
      var checked = 0
      let verifySeconds = try seconds {
        let report = try reader.verify()
        guard report.isValid else { throw BenchError("verify found problems: \(report.problems.prefix(3))") }
        checked = report.entriesChecked
      }
      try reader.close()
      results.add("w7.rate@\(length)", Double(checked) / verifySeconds)

      // W5: reopen from the newest snapshot.
      var reopenTimes: [Double] = []
      for _ in 0..<config.reopens {
        var store: LedgerStore?
        reopenTimes.append(try seconds { store = try openCBOR() })
        guard store?.recovery.snapshotSeq == UInt64(count) else {
          throw BenchError("reopen did not start from the snapshot at \(count): \(String(describing: store?.recovery))")
        }
        try store?.close()
      }
      results.add("w5.ms@\(length)", median(reopenTimes) * 1_000)

      // W6: state(at:) at random sequence numbers.
      cborStore = try openCBOR()
      var random = SplitMix64(seed: UInt64(length))
      var latencies: [Double] = []
      let deadline = ContinuousClock.now + .seconds(config.stateAtBudget)
      for query in 0..<config.stateAtQueries {
        if query >= 3, ContinuousClock.now > deadline { break }
        let seq = 1 + random.next() % UInt64(count - 1)
        latencies.append(try seconds { _ = try cborStore.state(at: seq) })
      }
      results.add("w6.median@\(length)", median(latencies) * 1_000)
      results.add("w6.p99@\(length)", percentile(latencies, 99) * 1_000)
      results.add("w6.queries@\(length)", Double(latencies.count))
      log("  state(at:) at \(length): median \(milliseconds(median(latencies) * 1_000)) over \(latencies.count) queries")

      // W1 at this length: single sends appended to the grown log.
      let singles = workload.nextActions(config.growthSends)
      jsonLog = try openJSON()
      raw = try openRaw()
      events = try openGRDB()
      let chronicleSeconds = try seconds { for action in singles { try cborStore.send(action) } }
      let rawSeconds = try seconds { for _ in singles { try raw.putOne() } }
      let grdbSeconds = try seconds { for action in singles { try events.send(action) } }
      try appendJSON(jsonLog, singles)
      count += singles.count
      results.add("w1.chronicle@\(length)", Double(singles.count) / chronicleSeconds)
      results.add("w1.raw@\(length)", Double(singles.count) / rawSeconds)
      results.add("w1.grdb@\(length)", Double(singles.count) / grdbSeconds)
    }
    for (system, time) in total { results.add("w3.\(system)", Double(batched) / time) }
    try cborStore.close()
    try jsonLog.close()
    raw.close()
    try events.close()
  }

  // MARK: - Helpers

  /// Opens a store of `reducer` in a new scratch directory (deleted afterwards)
  /// and records `count` actions over the seconds `body` takes with it.
  private mutating func measureStore<R: Reducer>(
    _ key: String, _ reducer: R, initialState: R.State, count: Int, durability: Durability = .normal, root: URL,
    _ body: (Store<R.State, R.Action>) throws -> Void
  ) throws {
    try measure(key, count: count, root: root) { dir in
      let store = try ChronicleSystem.store(
        dir.path, reducer: reducer, initialState: initialState, options: ChronicleSystem.options(durability: durability))
      defer { try? store.close() }
      return try seconds { try body(store) }
    }
  }

  /// Runs `body` in a new scratch directory (deleted afterwards) and records `count / seconds`.
  private mutating func measure(
    _ key: String, count: Int, root: URL, _ body: (Scratch) throws -> Double
  ) throws {
    try measure(key, root: root) { dir in (count, try body(dir)) }
  }

  /// Runs `body` in a new scratch directory (deleted afterwards); it returns the
  /// items it processed and the seconds that took, and `items / seconds` is recorded.
  private mutating func measure(
    _ key: String, root: URL, _ body: (Scratch) throws -> (items: Int, seconds: Double)
  ) throws {
    let dir = try Scratch(root: root, name: key.replacingOccurrences(of: "@", with: "-"))
    defer { dir.remove() }
    let (items, elapsed) = try body(dir)
    results.add(key, Double(items) / elapsed)
    log("  \(key): \(rate(Double(items) / elapsed))")
  }

  /// The JSON file model over `actions`, stopping early when the time budget is spent.
  private mutating func measureJSONFile(
    _ key: String, actions: [Ledger.Action], initialState: Ledger.State, synced: Bool, root: URL
  ) throws {
    let budget = config.jsonFileBudget
    try measure(key, root: root) { dir in
      let model = JSONFileModel(dir.file("state.json"), synced: synced, initialState: initialState)
      var done = 0
      let start = ContinuousClock.now
      for action in actions {
        try model.send(action)
        done += 1
        if done >= 20, (ContinuousClock.now - start).seconds > budget { break }
      }
      return (done, (ContinuousClock.now - start).seconds)
    }
  }
}

/// A progress line on standard error.
func log(_ message: String) {
  FileHandle.standardError.write(Data((message + "\n").utf8))
}
