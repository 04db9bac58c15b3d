import Chronicle
import Dispatch
import Foundation
import GRDB
import Synchronization

/// Concurrent senders and the async `send`: `.full` and `.normal` with 1 and 8 senders,
/// GRDB with 8 writers in synchronous=FULL (WAL), and `await send` against the synchronous `send`.
///
/// Keys: `conc.full.1` / `conc.full.8`, `conc.normal.1` / `conc.normal.8` (sends per second, all
/// senders together), `conc.grdb.full.8`, `conc.async.normal` / `conc.sync.normal` (one sender),
/// `conc.async.full.8` (8 tasks).
struct ConcurrentWorkloads {
  /// Threads or tasks in the concurrent rows.
  static let senders = 8

  let config: Config

  /// Sends per sender, by durability. With `.full`, 600 each: at 150 the eight senders' 1,200 sends
  /// took 40–50 ms, shorter than this machine's scheduling hiccups, and the ratio of single rounds
  /// ranged over 4.5–7.8× (`bench send full`).
  var fullSends: Int { config.quick ? 40 : 600 }
  var normalSends: Int { config.quick ? 2_000 : 10_000 }

  func run(root: URL, into results: inout Results) throws {
    var workload = LedgerWorkload(accounts: config.accounts)
    let initialState = workload.initialState
    let full = (0..<Self.senders).map { _ in workload.nextActions(fullSends) }
    let normal = (0..<Self.senders).map { _ in workload.nextActions(normalSends) }

    for (durability, name, perSender) in [(Durability.full, "full", full), (.normal, "normal", normal)] {
      let one = try inFreshStore(root, "conc-\(name)-1", initialState, durability) { store in
        for action in perSender.joined() { try store.send(action) }
      }
      record(&results, "conc.\(name).1", Double(perSender.joined().count) / one)
      let eight = try inFreshStore(root, "conc-\(name)-8", initialState, durability) { store in
        try onThreads(Self.senders) { index in
          for action in perSender[index] { try store.send(action) }
        }
      }
      record(&results, "conc.\(name).8", Double(perSender.joined().count) / eight)
    }

    let grdbDir = try Scratch(root: root, name: "conc-grdb-full-8")
    defer { grdbDir.remove() }
    let grdb = try ConcurrentGRDB(grdbDir.file("events.sqlite"), initialState: initialState)
    let grdbSeconds = try seconds {
      try onThreads(Self.senders) { index in
        for action in full[index] { try grdb.send(action) }
      }
    }
    try grdb.close()
    record(&results, "conc.grdb.full.8", Double(full.joined().count) / grdbSeconds)

    // One sender, sync and async, alternating which goes first.
    let single = Array(normal.joined().prefix(config.quick ? 10_000 : 40_000))
    for round in 0..<2 {
      for isAsync in round == 0 ? [false, true] : [true, false] {
        let elapsed = try inFreshStore(root, "conc-\(isAsync ? "async" : "sync")-\(round)", initialState, .normal) {
          store in
          if isAsync {
            try blockingOnTask {
              for action in single { try await store.send(action) }
            }
          } else {
            for action in single { try store.send(action) }
          }
        }
        record(&results, isAsync ? "conc.async.normal" : "conc.sync.normal", Double(single.count) / elapsed)
      }
    }
    let asyncFull = try inFreshStore(root, "conc-async-full-8", initialState, .full) { store in
      try blockingOnTask {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for index in 0..<Self.senders {
            group.addTask { for action in full[index] { try await store.send(action) } }
          }
          try await group.waitForAll()
        }
      }
    }
    record(&results, "conc.async.full.8", Double(full.joined().count) / asyncFull)
  }

  private func record(_ results: inout Results, _ key: String, _ value: Double) {
    results.add(key, value)
    log("  \(key): \(rate(value))")
  }

  /// Seconds `body` takes with a new ledger store (snapshot every 1,000, CBOR) in a new scratch directory.
  private func inFreshStore(
    _ root: URL, _ name: String, _ initialState: Ledger.State, _ durability: Durability,
    _ body: (LedgerStore) throws -> Void
  ) throws -> Double {
    let dir = try Scratch(root: root, name: name)
    defer { dir.remove() }
    let store = try ChronicleSystem.ledger(
      dir.path, initialState: initialState, options: ChronicleSystem.options(durability: durability))
    defer { try? store.close() }
    return try seconds { try body(store) }
  }
}

// MARK: - Threads and tasks

/// Runs `body(index)` on `count` threads at once and waits for all; rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
  let group = DispatchGroup()
  let failure = Mutex<(any Error)?>(nil)
  for index in 0..<count {
    group.enter()
    Thread {
      do { try body(index) } catch { failure.withLock { $0 = $0 ?? error } }
      group.leave()
    }.start()
  }
  group.wait()
  if let error = failure.withLock({ $0 }) { throw error }
}

/// Runs `body` in a task and blocks this (non-cooperative) thread until it ends.
func blockingOnTask(_ body: @escaping @Sendable () async throws -> Void) throws {
  let done = DispatchSemaphore(value: 0)
  let failure = Mutex<(any Error)?>(nil)
  Task {
    do { try await body() } catch { failure.withLock { $0 = error } }
    done.signal()
  }
  done.wait()
  if let error = failure.withLock({ $0 }) { throw error }
}

// MARK: - GRDB with concurrent writers

/// GRDB's event table written by several threads at once: WAL, synchronous=FULL, one transaction
/// per action (GRDB serializes the writes; SQLite has no group commit).
///
/// `@unchecked Sendable`: `queue` is GRDB's `DatabaseQueue` (thread-safe, writes serialized), and
/// `state` and `encoder` are only touched inside `queue.write`, which runs one closure at a time.
final class ConcurrentGRDB: @unchecked Sendable {
  private let queue: DatabaseQueue
  private var state: Ledger.State
  private let encoder = JSONEncoder()

  init(_ path: String, initialState: Ledger.State) throws {
    let events = try GRDBEventStore(path, synchronous: "FULL", initialState: initialState)
    try events.close()
    var configuration = Configuration()
    configuration.journalMode = .wal
    queue = try DatabaseQueue(path: path, configuration: configuration)
    state = initialState
    // GRDB sets synchronous=NORMAL with WAL: set FULL after it, on the one connection, and check.
    let level = try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA synchronous = FULL")
      return try Int.fetchOne(db, sql: "PRAGMA synchronous")
    }
    guard level == 2 else { throw BenchError("GRDB opened with synchronous \(level ?? -1), not FULL") }
  }

  /// Appends one action in its own transaction and folds it.
  func send(_ action: Ledger.Action) throws {
    try queue.write { db in
      let payload = try encoder.encode(action)
      try db.cachedStatement(sql: GRDBEventStore.insertSQL).execute(
        arguments: [Date().microsecondsSince1970, action.typeName, payload])
      Ledger.apply(action, to: &state.balances)
    }
  }

  func close() throws { try queue.close() }
}

// MARK: - Table and targets

extension Report {
  /// Concurrent senders and the async `send`.
  var concurrencyTable: Table {
    var table = Table("figure", "actions/s", "÷ one sender")
    let workloads = ConcurrentWorkloads(config: config)
    let senders = ConcurrentWorkloads.senders
    let full1 = results["conc.full.1"]
    let normal1 = results["conc.normal.1"]
    table.add("`send`, `.full`, 1 sender (ledger, \(grouped(Double(workloads.fullSends * senders))) sends)", rate(full1), "1.00×")
    table.add("`send`, `.full`, \(senders) threads (group commit)", rate(results["conc.full.8"]), ratio(results["conc.full.8"], full1))
    table.add("`await send`, `.full`, \(senders) tasks (group commit)", rate(results["conc.async.full.8"]), ratio(results["conc.async.full.8"], full1))
    table.add(
      "GRDB, \(senders) writer threads, synchronous=FULL, WAL, one transaction per action",
      rate(results["conc.grdb.full.8"]), "")
    table.add("`send`, `.normal`, 1 sender (\(grouped(Double(workloads.normalSends * senders))) sends)", rate(normal1), "1.00×")
    table.add("`send`, `.normal`, \(senders) threads", rate(results["conc.normal.8"]), ratio(results["conc.normal.8"], normal1))
    let sync = results["conc.sync.normal"]
    table.add("`send`, `.normal`, one thread (sync vs async pair)", rate(sync), "")
    table.add("`await send`, `.normal`, one task", rate(results["conc.async.normal"]), "\(ratio(results["conc.async.normal"], sync)) of sync")
    return table
  }
}

extension Results {
  /// Issue 22's targets, over the concurrent workloads' figures.
  func concurrencyTargets(config: Config) -> [Target] {
    var targets: [Target] = []
    let senders = ConcurrentWorkloads.senders
    func share(_ key: String, of base: String) -> (Double?, Double?, Double?) {
      let value = self[key]
      let other = self[base]
      if let value, let other, other > 0 { return (value / other, value, other) }
      return (nil, value, other)
    }
    let (fullGain, full8, full1) = share("conc.full.8", of: "conc.full.1")
    targets.append(
      Target(
        name: "`.full` with \(senders) concurrent senders ≥ 5× one sender",
        measured: fullGain.map { "\(times($0)) (\(rate(full8)) vs \(rate(full1)))" } ?? "–",
        passed: fullGain.map { $0 >= 5 }, profile: nil))
    let (grdbGain, _, grdb) = share("conc.full.8", of: "conc.grdb.full.8")
    targets.append(
      Target(
        name: "`.full` with \(senders) concurrent senders ≥ 2× GRDB with \(senders) writers, synchronous=FULL, WAL",
        measured: grdbGain.map { "\(times($0)) (\(rate(full8)) vs \(rate(grdb)))" } ?? "–",
        passed: grdbGain.map { $0 >= 2 }, profile: nil))
    let (normalGain, normal8, normal1) = share("conc.normal.8", of: "conc.normal.1")
    targets.append(
      Target(
        name: "`.normal` with \(senders) concurrent senders not slower than one sender",
        measured: normalGain.map { "\(times($0)) (\(rate(normal8)) vs \(rate(normal1)))" } ?? "–",
        passed: normalGain.map { $0 >= 1 }, profile: nil))
    let (asyncShare, async, sync) = share("conc.async.normal", of: "conc.sync.normal")
    targets.append(
      Target(
        name: "`await send` (`.normal`, one task) ≥ 80 % of the synchronous rate",
        measured: asyncShare.map { "\(percent($0)) (\(rate(async)) vs \(rate(sync)))" } ?? "–",
        passed: asyncShare.map { $0 >= 0.8 }, profile: nil))
    // These targets are about apps that write no conformance by hand: the macro's figure decides,
    // the plain-Codable one follows it.
    let length = config.lengths.last ?? 0
    for (name, key, plain) in [
      ("Codable actions, no conformance by hand (`@CBORCodable`): batched appends ≥ 1,000,000 actions/s (W3)",
       "w3.chronicle.macro", "w3.chronicle.codable"),
      ("Codable actions, no conformance by hand (`@CBORCodable`): replay ≥ 1,000,000 actions/s (W4, CBOR)",
       "w4.rate.chronicle.macro@\(length)", "w4.rate.chronicle.codable@\(length)"),
    ] {
      let value = self[key]
      targets.append(
        Target(
          name: name, measured: "\(rate(value)) (plain Codable: \(rate(self[plain])))",
          passed: value.map { $0 >= 1_000_000 }, profile: nil))
    }
    return targets
  }
}
