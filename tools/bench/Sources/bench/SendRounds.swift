import Chronicle
import Foundation

/// `bench send`: W1 (`send`, `.normal`, one action per send) against raw LMDB's one transaction
/// per put, and `.normal` with 8 concurrent senders against one, in alternating rounds, printed,
/// no file written. `bench send profile [COUNT]` runs COUNT W1 sends once, for `perf record`.
///
/// Each round measures both sides of a comparison back to back, in alternating order, and prints
/// its ratio; the medians of the rounds close the output, so that a burst of load from elsewhere
/// spoils one round's pair rather than one side.
struct SendRounds {
  let config: Config
  var rounds: Int

  static let usage = """
    usage: bench send [--quick] [--rounds N]   W1 against raw LMDB, 8 .normal senders against one
           bench send full [--rounds N]        8 .full senders (threads, then tasks) against one
           bench send profile [COUNT]          COUNT (default 200,000) W1 sends, once, for a profiler
           bench send profile-raw [COUNT]      the same number of raw LMDB puts, one transaction each
           bench send profile-8 [COUNT]        COUNT sends from 8 threads at once
           bench send profile-8-full [COUNT]   the same with .full durability (group commit)
           bench send profile-state [COUNT]    COUNT W9 sends at a 10,000-account state
    """

  static func main(_ arguments: [String]) throws {
    if let mode = arguments.first, mode.hasPrefix("profile") {
      let count = arguments.count > 1 ? Int(arguments[1]) ?? 200_000 : 200_000
      return try profile(
        count: count, raw: mode == "profile-raw", threads: mode.hasPrefix("profile-8") ? 8 : 1,
        durability: mode == "profile-8-full" ? .full : .normal,
        accounts: mode == "profile-state" ? 10_000 : nil)
    }
    let full = arguments.first == "full"
    var rest = full ? Array(arguments.dropFirst()) : arguments
    let rounds = try Config.takeRounds(from: &rest, usage: usage)
    let config = try Config.parse(rest)
    let sends = SendRounds(config: config, rounds: rounds)
    try full ? sends.runFull() : sends.run()
  }

  /// `.full` with 8 concurrent senders against one, per round (the sends of the full run's row).
  func runFull() throws {
    try withBenchRoot(config.scratchRoot, "send-full") { try runFull(root: $0) }
  }

  private func runFull(root: URL) throws {
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let perSender = ConcurrentWorkloads(config: config).fullSends
    let concurrent = (0..<ConcurrentWorkloads.senders).map { _ in workload.nextActions(perSender) }
    var gains: [Double] = []
    var asyncGains: [Double] = []
    for round in 0..<rounds {
      let (one, eight) = try eightAgainstOne(root, round: round, initialState, .full, concurrent)
      let dir = try Scratch(root: root, name: "conc-async")
      defer { dir.remove() }
      let store = try ChronicleSystem.ledger(dir.path, initialState: initialState, options: ChronicleSystem.options(durability: .full))
      defer { try? store.close() }
      let tasks = Double(concurrent.joined().count) / (try seconds {
        try blockingOnTask {
          try await withThrowingTaskGroup(of: Void.self) { group in
            for actions in concurrent { group.addTask { for action in actions { try await store.send(action) } } }
            try await group.waitForAll()
          }
        }
      })
      gains.append(eight / one)
      asyncGains.append(tasks / one)
      print(
        "round \(round + 1): .full 8 threads \(rate(eight)) (\(ratio(eight, one))), 8 tasks \(rate(tasks))"
          + " (\(ratio(tasks, one))) vs 1 sender \(rate(one))")
    }
    print(
      "median of \(rounds) rounds: .full 8 threads ÷ 1 \(String(format: "%.2f", median(gains))),"
        + " 8 tasks ÷ 1 \(String(format: "%.2f", median(asyncGains)))")
  }

  /// The rates of `concurrent` sent by one thread and by one thread per list, into fresh stores of
  /// `durability`, in the order the round's parity says.
  func eightAgainstOne(
    _ root: URL, round: Int, _ initialState: Ledger.State, _ durability: Durability, _ concurrent: [[Ledger.Action]]
  ) throws -> (one: Double, eight: Double) {
    var oneRate = 0.0
    var eightRate = 0.0
    for senders in round % 2 == 0 ? [1, concurrent.count] : [concurrent.count, 1] {
      let dir = try Scratch(root: root, name: "conc-\(senders)")
      defer { dir.remove() }
      let options = ChronicleSystem.options(durability: durability)
      let store = try ChronicleSystem.ledger(dir.path, initialState: initialState, options: options)
      defer { try? store.close() }
      let elapsed = try seconds {
        if senders == 1 {
          for action in concurrent.joined() { try store.send(action) }
        } else {
          try onThreads(senders) { index in for action in concurrent[index] { try store.send(action) } }
        }
      }
      let sendRate = Double(concurrent.joined().count) / elapsed
      if senders == 1 { oneRate = sendRate } else { eightRate = sendRate }
    }
    return (oneRate, eightRate)
  }

  /// The W1 sends of ``Config/singleSends`` into a new log, and the concurrent rows, per round.
  func run() throws {
    try withBenchRoot(config.scratchRoot, "send") { try run(root: $0) }
  }

  private func run(root: URL) throws {
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let entrySize = try ChronicleSystem.entrySize(of: workload.nextAction())
    let sends = workload.nextActions(config.singleSends)
    let perSender = config.quick ? 2_000 : 10_000
    let concurrent = (0..<ConcurrentWorkloads.senders).map { _ in workload.nextActions(perSender) }
    var w1: [Double] = []
    var eight: [Double] = []
    for round in 0..<rounds {
      var chronicleRate = 0.0
      var rawRate = 0.0
      for side in round % 2 == 0 ? [0, 1] : [1, 0] {
        let dir = try Scratch(root: root, name: "w1-\(side)")
        defer { dir.remove() }
        if side == 0 {
          let store = try ChronicleSystem.ledger(dir.path, initialState: initialState, options: ChronicleSystem.options())
          defer { try? store.close() }
          chronicleRate = Double(sends.count) / (try seconds { for action in sends { try store.send(action) } })
        } else {
          let raw = try RawLMDB(dir.path, synced: false, valueSize: entrySize)
          defer { raw.close() }
          rawRate = Double(sends.count) / (try seconds { for _ in 0..<sends.count { try raw.putOne() } })
        }
      }
      w1.append(chronicleRate / rawRate)
      let (oneRate, eightRate) = try eightAgainstOne(root, round: round, initialState, .normal, concurrent)
      eight.append(eightRate / oneRate)
      print(
        "round \(round + 1): W1 \(rate(chronicleRate)) vs raw \(rate(rawRate)) (\(ratio(chronicleRate, rawRate)));"
          + " .normal 8 senders \(rate(eightRate)) vs 1 \(rate(oneRate)) (\(ratio(eightRate, oneRate)))")
    }
    print(
      "median of \(rounds) rounds: W1 ÷ raw \(String(format: "%.2f", median(w1))),"
        + " 8 senders ÷ 1 \(String(format: "%.2f", median(eight)))")
  }

  /// `count` W1 sends into a new log with `durability`, once, from one thread or `threads` at once
  /// (or, with `raw`, as many raw LMDB puts of an entry's size).
  static func profile(count: Int, raw: Bool, threads: Int, durability: Durability, accounts: Int?) throws {
    let config = try Config.parse([])
    var workload = LedgerWorkload(accounts: accounts ?? config.accounts)
    let initialState = workload.initialState
    let sends = workload.nextActions(count)
    let dir = try Scratch(root: config.scratchRoot, name: "chronicle-bench-\(getpid())-send-profile")
    defer { dir.remove() }
    if raw {
      let raw = try RawLMDB(dir.path, synced: false, valueSize: try ChronicleSystem.entrySize(of: sends[0]))
      defer { raw.close() }
      let elapsed = try seconds { for _ in 0..<count { try raw.putOne() } }
      print("raw: \(rate(Double(count) / elapsed))")
      return
    }
    let options = ChronicleSystem.options(durability: durability)
    let store = try ChronicleSystem.ledger(dir.path, initialState: initialState, options: options)
    let perThread = count / threads
    let elapsed = try seconds {
      if threads == 1 {
        for action in sends { try store.send(action) }
      } else {
        try onThreads(threads) { index in
          for action in sends[(index * perThread)..<((index + 1) * perThread)] { try store.send(action) }
        }
      }
    }
    try store.close()
    print("\(threads) sender(s): \(rate(Double(perThread * threads) / elapsed))")
  }
}
