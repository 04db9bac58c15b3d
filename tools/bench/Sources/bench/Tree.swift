import Chronicle
@_spi(Benchmarks) import ChronicleLog
import Foundation

/// The Merkle tree's costs (the verifiable log): appends with and without the tree, proofs,
/// checkpoint verification and signing over one log of ``TreeWorkloads/logLength`` entries.
///
/// Keys: `tree.w1.on` / `tree.w1.off` (`.normal` single sends), `tree.w3.on` / `tree.w3.off`
/// (batches of 1,000), `tree.w1.ratio` / `tree.w3.ratio` (with ÷ without within each round), `tree.inclusion.ms` / `tree.consistency.ms` (medians), `tree.verify.s`
/// (one `verify(checkpoint:verifier:)`), `tree.sign.rate` (checkpoints signed per second).
struct TreeWorkloads {
  /// The length of the log the proofs, verification and signing run over, in every mode.
  static let logLength = 1_000_000

  let config: Config

  /// Rounds of the with/without comparison: each round measures both, in alternating order, and
  /// its ratio; the median of the rounds' ratios is what the target reads, so a burst of load from
  /// elsewhere spoils one round's pair rather than one side of the comparison.
  var rounds: Int { config.quick ? 7 : 11 }
  /// Batches of ``Config/batchSize`` per W3 measurement.
  var batches: Int { config.quick ? 50 : 200 }
  /// Random proofs of each kind.
  var queries: Int { config.quick ? 200 : 1_000 }
  /// Checkpoints signed in the signing measurement.
  var signings: Int { config.quick ? 2_000 : 10_000 }

  /// `bench tree profile on|off [COUNT]`: COUNT actions (default 200,000) sent in batches of
  /// ``Config/batchSize`` into a new log, with the tree or without it, once, for a profiler
  /// (`perf record`): the measured part runs in ``profiledBatches(_:_:)``.
  static func profile(_ arguments: [String]) throws {
    guard let mode = arguments.first, ["on", "off"].contains(mode) else {
      throw BenchError("usage: bench tree profile on|off [COUNT]")
    }
    let count = arguments.count > 1 ? Int(arguments[1]) ?? 200_000 : 200_000
    let config = try Config.parse([])
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let batches = (0..<(count / config.batchSize)).map { _ in workload.nextActions(config.batchSize) }
    let dir = try Scratch(root: config.scratchRoot, name: "chronicle-bench-\(getpid())-tree-profile-\(mode)")
    defer { dir.remove() }
    let store = try ActionLog.maintainsTree.withValue(mode == "on") {
      try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: ChronicleSystem.options())
    }
    let elapsed = try seconds { try profiledBatches(store, batches) }
    try store.close()
    print("tree \(mode): W3 \(rate(Double(batches.count * config.batchSize) / elapsed))")
  }

  @inline(never)
  static func profiledBatches(_ store: LedgerStore, _ batches: [[Ledger.Action]]) throws {
    for actions in batches { try store.send(contentsOf: actions) }
  }

  func run(root: URL, into results: inout Results) throws {
    try compare(root: root, into: &results)
    try overLargeLog(root: root, into: &results)
  }

  // MARK: - Appends with and without the tree

  /// The same sends and batches into fresh logs, with the tree maintained and without it
  /// (`ActionLog.maintainsTree`, bound only around the open: a switch only the benchmark and
  /// the tests use), alternating which goes first.
  private func compare(root: URL, into results: inout Results) throws {
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let sends = workload.nextActions(config.singleSends)
    let batched = (0..<batches).map { _ in workload.nextActions(config.batchSize) }
    for round in 0..<rounds {
      var rates: [Bool: (single: Double, batch: Double)] = [:]
      for tree in round % 2 == 0 ? [false, true] : [true, false] {
        let suffix = tree ? "on" : "off"
        let single = try inFreshStore(root, "tree-w1-\(suffix)", initialState, tree: tree) { store in
          for action in sends { try store.send(action) }
        }
        results.add("tree.w1.\(suffix)", Double(sends.count) / single)
        let batch = try inFreshStore(root, "tree-w3-\(suffix)", initialState, tree: tree) { store in
          for actions in batched { try store.send(contentsOf: actions) }
        }
        results.add("tree.w3.\(suffix)", Double(batches * config.batchSize) / batch)
        log("  tree \(suffix): W1 \(rate(Double(sends.count) / single)), W3 \(rate(Double(batches * config.batchSize) / batch))")
        rates[tree] = (Double(sends.count) / single, Double(batches * config.batchSize) / batch)
      }
      if let on = rates[true], let off = rates[false] {
        results.add("tree.w1.ratio", on.single / off.single)
        results.add("tree.w3.ratio", on.batch / off.batch)
      }
    }
  }

  /// Seconds `body` takes with a new ledger store in a new scratch directory (removed afterwards).
  private func inFreshStore(
    _ root: URL, _ name: String, _ initialState: Ledger.State, tree: Bool, _ body: (LedgerStore) throws -> Void
  ) throws -> Double {
    let dir = try Scratch(root: root, name: name)
    defer { dir.remove() }
    let store = try ActionLog.maintainsTree.withValue(tree) {
      try ChronicleSystem.store(dir.path, reducer: Ledger(), initialState: initialState, options: ChronicleSystem.options())
    }
    defer { try? store.close() }
    return try seconds { try body(store) }
  }

  // MARK: - Proofs, verification and signing at 1M entries

  private func overLargeLog(root: URL, into results: inout Results) throws {
    let length = Self.logLength
    let dir = try Scratch(root: root, name: "tree-log")
    defer { dir.remove() }
    var workload = LedgerWorkload(accounts: config.accounts)
    let built = try seconds {
      let store = try ChronicleSystem.store(
        dir.path, reducer: Ledger(), initialState: workload.initialState, options: ChronicleSystem.options())
      var count = 0
      while count < length {
        let n = min(config.batchSize, length - count)
        try store.send(contentsOf: workload.nextActions(n))
        count += n
      }
      try store.close()
    }
    log("  tree: built a log of \(grouped(Double(length))) entries in \(secondsText(built))")

    // The store kept the tree: a reader sees it whole, and the writer's open has nothing to build.
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    let kept = try reader.treeSize
    try reader.close()
    guard kept == UInt64(length) else { throw BenchError("the store's tree covers \(kept) entries, not \(length)") }
    var opened: ActionLog?
    let opening = try seconds { opened = try ActionLog(directory: dir.url) }
    guard let chronicle = opened else { throw BenchError("the log did not open") }
    defer { try? chronicle.close() }
    log("  tree: the writer opened the log in \(milliseconds(opening * 1_000))")
    let size = try chronicle.treeSize
    guard size == UInt64(length) else { throw BenchError("the tree covers \(size) entries, not \(length)") }
    let root = try chronicle.treeRoot(size: size)
    var random = SplitMix64(seed: 17)

    // Inclusion proofs of random entries in the whole tree; the first one is checked.
    var times: [Double] = []
    for query in 0..<queries {
      let seq = random.next() % size + 1
      var proof: [[UInt8]] = []
      times.append(try seconds { proof = try chronicle.inclusionProof(seq: seq, treeSize: size) } * 1_000)
      if query == 0 {
        let value = try chronicle.storedValue(seq: seq) ?? []
        try MerkleTree.verifyInclusion(
          leafHash: MerkleHash.leaf(seq: seq, value: value), index: seq - 1, size: size, proof: proof, root: root)
      }
    }
    results.add("tree.inclusion.ms", median(times))

    // Consistency proofs from random older sizes to the whole tree; the first one is checked.
    times = []
    for query in 0..<queries {
      let old = random.next() % (size - 1) + 1
      var proof: [[UInt8]] = []
      times.append(try seconds { proof = try chronicle.consistencyProof(from: old, to: size) } * 1_000)
      if query == 0 {
        try MerkleTree.verifyConsistency(
          oldSize: old, newSize: size, oldRoot: try chronicle.treeRoot(size: old), newRoot: root, proof: proof)
      }
    }
    results.add("tree.consistency.ms", median(times))

    // Signing: a checkpoint of the head, signed and stored, again and again.
    let signer = try NoteSigner.generate(name: "bench.example/log")
    var note: SignedNote?
    let signing = try seconds { for _ in 0..<signings { note = try chronicle.signCheckpoint(with: signer) } }
    results.add("tree.sign.rate", Double(signings) / signing)

    // Verifying the checkpoint against the whole chronicle.
    guard let note else { throw BenchError("no checkpoint was signed") }
    var verification: CheckpointVerification?
    let verifying = try seconds { verification = try chronicle.verify(checkpoint: note, verifier: signer.verifier) }
    guard verification?.isValid == true else { throw BenchError("the checkpoint did not verify: \(verification?.description ?? "")") }
    results.add("tree.verify.s", verifying)
    log(
      "  tree: inclusion \(milliseconds(results["tree.inclusion.ms"])), consistency \(milliseconds(results["tree.consistency.ms"])), "
        + "signing \(rate(Double(signings) / signing)), verify \(secondsText(verifying))")
  }
}
