import Chronicle
import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Synchronization

// Shared streams (docs/sync.md): devices that append to one stream ordered by this cluster, each
// device a `SharedStore` of this process with its own `PostgresClient` and `PostgresStreamServer`,
// as separate devices have. Four measurements, each repeated `rounds` times in new directories and
// new streams; every figure is the median over the rounds:
//
// 1. propagation: device A sends, spaced out; device B, both syncing continuously, sees the new
//    state in a `subscribe` observer (on the main actor). p50 and p99 of send → observer, per round.
// 2. aggregate throughput: 8 devices send N actions each, from 8 threads, as fast as `send`
//    returns, while syncing continuously; actions/s = all actions / (first send → the server's head
//    holds them all).
// 3. rebase: device B holds 1,000 pending actions (sent offline), the stream 10,000 entries that A
//    pushed; the time of `B.sync(with:)` against those entries served from memory (no network), and
//    against PostgreSQL for context.
// 4. the cost of syncing on `send`: the send rate of a `SharedStore` alone, and with
//    `syncContinuously` running against PostgreSQL in the same process; a plain `Store` for context.

// MARK: - Options

/// The shared streams' workloads.
struct SyncOptions {
  var enabled = true
  /// Sends of device A in each propagation round, one every `interval` milliseconds.
  var propagationSends = 300
  var interval = 20
  /// Devices pushing together, and the actions each sends.
  var devices = 8
  var actionsPerDevice = 5_000
  /// The rebase: pending actions of B, entries of A upstream.
  var pending = 1_000
  var upstream = 10_000
  /// Actions sent one by one for the send-rate rows.
  var sends = 20_000
  /// The measurements to run (all by default): propagation, aggregate, rebase, sends.
  var parts: Set<String> = SyncOptions.allParts

  static let allParts: Set<String> = ["propagation", "aggregate", "rebase", "sends"]

  static let quick = SyncOptions(propagationSends: 100, actionsPerDevice: 1_000, sends: 5_000)
}

// MARK: - The app

/// A counter per account: small CBOR actions, a validator that reads the whole state.
struct Counters: Reducer {
  struct State: Codable, Sendable, Equatable { var counts: [String: Int] = [:] }

  enum Action: Codable, Sendable, Equatable {
    case add(account: String, amount: Int)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .add(let account, let amount): state.counts[account, default: 0] += amount
    }
    return .none
  }

  static let accounts = (0..<64).map { "acct-\($0)" }

  /// Action `i` of the workload.
  static func action(_ i: Int) -> Action { .add(account: accounts[i % accounts.count], amount: 1 + i % 9) }

  /// The metadata of action `i`.
  static func metadata(_ i: Int) -> [String: String] { ["user": ["ann", "bob", "eve"][i % 3]] }

  /// The sum of the amounts of actions `0..<count`.
  static func total(_ count: Int) -> Int { (0..<count).reduce(0) { $0 + 1 + $1 % 9 } }

  static let noNegativeCount = Validator<State>("no counter below zero") { $0.counts.values.allSatisfy { $0 >= 0 } }
}

typealias Device = SharedStore<Counters.State, Counters.Action>

/// Opens (creating) device `name`'s copy of `stream` in `directory` (`.normal` durability, CBOR).
func openDevice(_ directory: URL, _ name: String, stream: SharedStream) throws -> Device {
  try SharedStore(
    initialState: Counters.State(), reducer: Counters(), directory: directory, stream: stream, device: name,
    validators: [Counters.noNegativeCount])
}

// MARK: - Helpers

/// A value behind a lock, shared between tasks, threads and the main actor.
final class Locked<Value: Sendable>: Sendable {
  private let mutex: Mutex<Value>
  init(_ value: Value) { mutex = Mutex(value) }
  func update<R: Sendable>(_ body: @Sendable (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
  var value: Value { mutex.withLock { $0 } }
}

/// Milliseconds in `duration`.
func milliseconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

/// The nearest-rank percentile `p` (0…1) of `values`.
func percentile(_ values: [Double], _ p: Double) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return .nan }
  return sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
}

/// Runs `body(index)` for each index below `count`, each on a thread of its own (neither the main
/// thread nor the concurrency pool, where the syncs and the observers run), and returns once all
/// ended; rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) async throws {
  let errors = Locked<[any Error]>([])
  let remaining = Locked(count)
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    for index in 0..<count {
      Thread {
        do { try body(index) } catch { errors.update { $0.append(error) } }
        if remaining.update({ left -> Int in
          left -= 1
          return left
        }) == 0 {
          continuation.resume()
        }
      }.start()
    }
  }
  if let error = errors.value.first { throw error }
}

/// Polls `condition` every millisecond until it holds; fails after `limit`.
func waitUntil(_ what: String, limit: Duration = .seconds(120), _ condition: () async throws -> Bool) async throws {
  let deadline = ContinuousClock.now + limit
  while try await !condition() {
    guard ContinuousClock.now < deadline else { throw BenchFailure("\(what): not within \(limit)") }
    try await Task.sleep(for: .milliseconds(1))
  }
}

/// Runs `body` with `count` running clients (each its own pool) of a new, migrated database.
func withClients<R: Sendable>(_ count: Int, _ body: ([PostgresClient]) async throws -> R) async throws -> R {
  let database = try await PostgresServer.shared.makeDatabase()
  let clients = (0..<count).map { _ in
    PostgresClient(configuration: database.configuration, backgroundLogger: quietLogger)
  }
  return try await withThrowingTaskGroup(of: Void.self, returning: R.self) { group in
    for client in clients { group.addTask { await client.run() } }
    defer { group.cancelAll() }
    try await PostgresSchema.migrate(clients[0])
    return try await body(clients)
  }
}

/// Creates `name` on the server and registers `devices` for the `postgres` role (as the tests do).
func makeStream(_ name: String, devices: [String], on client: PostgresClient) async throws -> SharedStream {
  let stream = SharedStream(name)
  try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
  for device in devices {
    try await PostgresStreamServer.registerDevice(device, role: "postgres", in: stream, on: client)
  }
  return stream
}

/// The stream's head on the server.
func streamHead(_ stream: SharedStream, on client: PostgresClient) async throws -> UInt64 {
  let rows = try await client.query(
    "SELECT head_seq FROM chronicle.logs WHERE log_id = \(ByteBuffer(bytes: stream.id))", logger: quietLogger)
  for try await head in rows.decode(Int64.self) { return UInt64(head) }
  return 0
}

/// Returns the instant the server's head reached `seq`, told by `LISTEN/NOTIFY` (an observer's own
/// stream server) and checked with a read of the head.
func whenServerHolds(_ seq: UInt64, _ observer: PostgresStreamServer, limit: Duration = .seconds(300)) async throws
  -> ContinuousClock.Instant
{
  let deadline = ContinuousClock.now + limit
  while true {
    try await observer.waitForRecords(after: seq - 1, timeout: .seconds(1))
    let now = ContinuousClock.now
    if try await streamHead(observer.stream, on: observer.client) >= seq { return now }
    guard now < deadline else { throw BenchFailure("the server did not reach entry \(seq) within \(limit)") }
  }
}

/// A device syncing continuously in a task of its own; `stop()` ends it.
struct Syncing {
  let server: PostgresStreamServer
  let task: Task<Void, Never>

  init(_ device: Device, through server: PostgresStreamServer, progress report: (@Sendable (SyncReport) -> Void)? = nil) {
    self.server = server
    task = Task.detached {
      await device.syncContinuously(
        with: server, progress: report, onError: { error in progress("sync of \(device.device): \(error)") })
    }
  }

  /// Waits until the device listens for the stream's notifications (its first round is done).
  func listening() async throws {
    try await waitUntil("\(server.stream.name): listening", limit: .seconds(30)) { server.isListening }
  }

  func stop() async {
    task.cancel()
    await task.value
    await server.close()
  }
}

// MARK: - 1. Propagation

/// The send instants of device A and the latencies device B's observer saw.
struct Propagation: Sendable {
  var sent: [ContinuousClock.Instant] = []
  var seen = 0
  var latencies: [Double] = []
}

/// One round: `sends` probes from A, one every `interval`; B's observer's latencies in ms.
func propagationRound(
  _ round: Int, sends: Int, interval: Duration, clients: [PostgresClient], directory: URL
) async throws -> [Double] {
  defer { try? FileManager.default.removeItem(at: directory) }
  let stream = try await makeStream("propagation-\(round)", devices: ["ann", "bob"], on: clients[0])
  let ann = try openDevice(directory.appendingPathComponent("ann"), "ann", stream: stream)
  let bob = try openDevice(directory.appendingPathComponent("bob"), "bob", stream: stream)
  defer {
    try? ann.close()
    try? bob.close()
  }
  let table = Locked(Propagation())
  let token = bob.subscribe { new, _ in
    let now = ContinuousClock.now
    let count = new.counts["probe"] ?? 0
    table.update { table in
      while table.seen < count, table.seen < table.sent.count {
        table.latencies.append(milliseconds(now - table.sent[table.seen]))
        table.seen += 1
      }
    }
  }
  defer { token.cancel() }
  let syncs = [
    Syncing(ann, through: PostgresStreamServer(client: clients[0], stream: stream)),
    Syncing(bob, through: PostgresStreamServer(client: clients[1], stream: stream)),
  ]
  for sync in syncs { try await sync.listening() }
  // Warm up both paths (statements, connections) before the timed sends.
  for warmup in 1...5 {
    try ann.send(.add(account: "warmup", amount: 1))
    try await waitUntil("warm-up \(warmup) reaching bob", limit: .seconds(30)) {
      bob.confirmedState.counts["warmup"] == warmup
    }
  }
  // The sends from a task off the main actor, which stays free for the observer.
  let sender = Task.detached {
    let start = ContinuousClock.now
    for k in 0..<sends {
      try await Task.sleep(until: start + interval * k, clock: .continuous)
      table.update { $0.sent.append(ContinuousClock.now) }
      try ann.send(.add(account: "probe", amount: 1), metadata: ["probe": "\(k)"])
    }
  }
  try await sender.value
  try await waitUntil("bob's observer seeing \(sends) probes", limit: .seconds(60)) { table.value.seen == sends }
  for sync in syncs { await sync.stop() }
  return table.value.latencies
}

// MARK: - 2. Aggregate throughput

/// What one round of devices pushing together measured.
struct AggregateRun {
  /// Actions per second: all of them over first send → the server holds them all.
  var rate: Double
  /// Seconds from the first send until every device holds every entry.
  var converged: Double
  /// Seconds the sends took (all threads).
  var sending: Double
}

/// One round: `clients.count` devices, each sending `perDevice` actions from a thread of its own
/// while syncing continuously through its own client.
func aggregateRound(_ round: Int, perDevice: Int, clients: [PostgresClient], directory: URL) async throws
  -> AggregateRun
{
  defer { try? FileManager.default.removeItem(at: directory) }
  let names = clients.indices.map { "device-\($0)" }
  let stream = try await makeStream("aggregate-\(round)", devices: names, on: clients[0])
  let devices = try names.map { try openDevice(directory.appendingPathComponent($0), $0, stream: stream) }
  defer { for device in devices { try? device.close() } }
  let syncs = zip(devices, clients).map { Syncing($0, through: PostgresStreamServer(client: $1, stream: stream)) }
  for sync in syncs { try await sync.listening() }
  let observer = PostgresStreamServer(client: clients[0], stream: stream)
  try await observer.waitForRecords(after: 0, timeout: .milliseconds(1))
  try await waitUntil("the observer listening", limit: .seconds(30)) { observer.isListening }
  let total = UInt64(devices.count * perDevice)

  let start = ContinuousClock.now
  async let held = whenServerHolds(total, observer)
  try await onThreads(devices.count) { index in
    for i in 0..<perDevice { try devices[index].send(Counters.action(i), metadata: Counters.metadata(i)) }
  }
  let sent = ContinuousClock.now
  let onServer = try await held
  try await waitUntil("every device holding \(total) entries") { devices.allSatisfy { $0.head.seq == total } }
  let converged = ContinuousClock.now
  for sync in syncs { await sync.stop() }
  await observer.close()

  // Every device holds the same stream, and every action once.
  let heads = Set(devices.map(\.head))
  let roots = Set(try devices.map { try $0.treeRoot() })
  let sum = devices[0].state.counts.values.reduce(0, +)
  guard heads.count == 1, roots.count == 1, devices.allSatisfy({ $0.pending.isEmpty }),
    sum == devices.count * Counters.total(perDevice)
  else {
    throw BenchFailure("the devices did not end with one stream holding every action (heads \(heads.count), sum \(sum))")
  }
  return AggregateRun(
    rate: Double(total) / seconds(onServer - start), converged: seconds(converged - start),
    sending: seconds(sent - start))
}

func seconds(_ duration: Duration) -> Double { milliseconds(duration) / 1e3 }

// MARK: - 3. Rebase

/// A stream served from memory: `records(after:limit:)` reads the array, `append` appends a batch
/// that continues the head (its first sequence number and the previous hash: the hashes themselves
/// are checked by the device that receives them) and refuses one that does not.
final class MemoryStreamServer: StreamServer {
  private let stored: Mutex<[StreamRecord]>

  /// `records` must be the stream's entries from 1, in order.
  init(_ records: [StreamRecord]) { stored = Mutex(records) }

  var count: Int { stored.withLock { $0.count } }

  func records(after seq: UInt64, limit: Int) async throws -> [StreamRecord] {
    stored.withLock { stored in
      let start = Int(min(seq, UInt64(stored.count)))
      return Array(stored[start..<min(stored.count, start + limit)])
    }
  }

  func append(_ records: [StreamRecord], previousHash: [UInt8]) async throws -> Bool {
    guard let first = records.first else { return true }
    let consecutive = records.enumerated().allSatisfy { $0.element.seq == first.seq + UInt64($0.offset) }
    guard consecutive else { throw BenchFailure("a push of records that are not consecutive") }
    return stored.withLock { stored in
      guard first.seq == UInt64(stored.count) + 1, previousHash == (stored.last?.hash ?? ChainAnchor.genesis.hash)
      else { return false }
      stored.append(contentsOf: records)
      return true
    }
  }

  func waitForRecords(after seq: UInt64, timeout: Duration) async throws {
    if count > seq { return }
    try await Task.sleep(for: timeout)
  }
}

/// What one rebase round measured, in milliseconds.
struct RebaseRun {
  /// The whole `sync(with:)`: pull, rebase, push, own entries back.
  var sync: Double
  /// Until the upstream entries were in and the pending actions rebased on them (the pull).
  var pulled: Double
}

/// Device `bob` in a new `directory`, holding `pending` actions sent offline, syncs once with
/// `server`, which holds `upstream` entries.
func rebaseRound(
  _ server: some StreamServer, stream: SharedStream, upstream: Int, pending: Int, directory: URL
) async throws -> RebaseRun {
  defer { try? FileManager.default.removeItem(at: directory) }
  let bob = try openDevice(directory, "bob", stream: stream)
  defer { try? bob.close() }
  for i in 0..<pending { try bob.send(Counters.action(i), metadata: Counters.metadata(i)) }
  let pulledAt = Locked<ContinuousClock.Instant?>(nil)
  let start = ContinuousClock.now
  let report = try await bob.sync(with: server) { report in
    if report.head >= UInt64(upstream) {
      let now = ContinuousClock.now
      pulledAt.update { $0 = $0 ?? now }
    }
  }
  let end = ContinuousClock.now
  let sum = bob.state.counts.values.reduce(0, +)
  guard report.pushed == pending, bob.head.seq == UInt64(upstream + pending), bob.pending.isEmpty,
    sum == Counters.total(upstream) + Counters.total(pending)
  else {
    throw BenchFailure("the rebase round ended with \(report.pushed) pushed, head \(bob.head.seq), sum \(sum)")
  }
  return RebaseRun(sync: milliseconds(end - start), pulled: milliseconds((pulledAt.value ?? end) - start))
}

/// The name of the rebase rounds' stream, and its upstream device.
let rebaseStream = SharedStream("rebase")

/// Device `ann` sends `count` actions and pushes them to a new stream of `client`'s database;
/// returns them as the server holds them.
func upstreamRecords(_ count: Int, client: PostgresClient, directory: URL) async throws -> [StreamRecord] {
  defer { try? FileManager.default.removeItem(at: directory) }
  let stream = try await makeStream(rebaseStream.name, devices: ["ann", "bob"], on: client)
  let ann = try openDevice(directory, "ann", stream: stream)
  defer { try? ann.close() }
  for i in 0..<count { try ann.send(Counters.action(i), metadata: Counters.metadata(i)) }
  let server = PostgresStreamServer(client: client, stream: stream)
  try await ann.sync(with: server)
  let records = try await server.records(after: 0, limit: count)
  guard records.count == count else { throw BenchFailure("the server holds \(records.count) of \(count) entries") }
  return records
}

/// A new database holding the rebase stream with `records`, appended as the server takes any push.
func withUpstream<R: Sendable>(
  _ records: [StreamRecord], _ body: (PostgresStreamServer) async throws -> R
) async throws -> R {
  try await withClients(1) { clients in
    let stream = try await makeStream(rebaseStream.name, devices: ["ann", "bob"], on: clients[0])
    let server = PostgresStreamServer(client: clients[0], stream: stream)
    var previous = ChainAnchor.genesis.hash
    var start = 0
    while start < records.count {
      let batch = Array(records[start..<min(records.count, start + 1_000)])
      guard try await server.append(batch, previousHash: previous) else { throw BenchFailure("the upstream did not append") }
      previous = batch.last!.hash
      start += batch.count
    }
    return try await body(server)
  }
}

// MARK: - 4. What syncing costs `send`

enum SendSubject: String, CaseIterable {
  /// A plain `Store` (`.normal`).
  case store
  /// A `SharedStore`, no sync running.
  case alone
  /// A `SharedStore` with `syncContinuously` against PostgreSQL in this process.
  case syncing
}

/// What one send-rate run measured.
struct SharedSendRun {
  var rate: Double
  /// Syncing: seconds from the last send until the server held every action.
  var catchUp: Double?
  /// While the sends ran: the share of the time the sending thread was on a core, and the CPU
  /// (µs per send) of this process and of the server's processes.
  var cpu = SendCPU()
}

struct SendCPU: Sendable {
  var senderShare = 0.0
  var processMicros = 0.0
  var serverMicros = 0.0

  var text: String {
    String(
      format: "sender on a core %.0f %% of the time; CPU per send: process %.1f µs, server %.1f µs",
      senderShare * 100, processMicros, serverMicros)
  }
}

/// CPU seconds the calling thread has used.
func threadCPUSeconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Sends `count` actions one by one from a thread of their own into a new store of `subject`.
func sharedSendRun(
  _ subject: SendSubject, count: Int, round: Int, client: PostgresClient, directory: URL
) async throws -> SharedSendRun {
  defer { try? FileManager.default.removeItem(at: directory) }
  let measured = Locked<(elapsed: Duration, sender: Double, process: Double, server: Double)>((.zero, 0, 0, 0))
  var cpu = SendCPU()
  func timed(_ send: @escaping @Sendable (Int) throws -> Void) async throws -> Double {
    try await onThreads(1) { _ in
      let (process, server, sender) = (ownCPUSeconds(), serverCPUSeconds(), threadCPUSeconds())
      let start = ContinuousClock.now
      for i in 0..<count { try send(i) }
      let end = ContinuousClock.now
      let used = (threadCPUSeconds() - sender, ownCPUSeconds() - process, serverCPUSeconds() - server)
      measured.update { $0 = (end - start, used.0, used.1, used.2) }
    }
    let run = measured.value
    cpu = SendCPU(
      senderShare: run.sender / seconds(run.elapsed), processMicros: run.process * 1e6 / Double(count),
      serverMicros: run.server * 1e6 / Double(count))
    return Double(count) / seconds(run.elapsed)
  }
  switch subject {
  case .store:
    let store = try Store(
      initialState: Counters.State(), reducer: Counters(), log: .directory(directory),
      options: StoreOptions(durability: .normal))
    defer { try? store.close() }
    let rate = try await timed { i in _ = try store.send(Counters.action(i), metadata: Counters.metadata(i)) }
    return SharedSendRun(rate: rate, cpu: cpu)
  case .alone:
    let device = try openDevice(directory, "ann", stream: SharedStream("sends-alone"))
    defer { try? device.close() }
    let rate = try await timed { i in _ = try device.send(Counters.action(i), metadata: Counters.metadata(i)) }
    return SharedSendRun(rate: rate, cpu: cpu)
  case .syncing:
    let stream = try await makeStream("sends-\(round)", devices: ["ann"], on: client)
    let device = try openDevice(directory, "ann", stream: stream)
    defer { try? device.close() }
    // How far the sync lags: the most actions pending after a batch was received, and the batches.
    let lag = Locked((batches: 0, maxPending: 0))
    let sync = Syncing(device, through: PostgresStreamServer(client: client, stream: stream)) { _ in
      let pending = device.pending.count
      lag.update { $0 = ($0.batches + 1, max($0.maxPending, pending)) }
    }
    let observer = PostgresStreamServer(client: client, stream: stream)
    try await sync.listening()
    try await observer.waitForRecords(after: 0, timeout: .milliseconds(1))
    let rate = try await timed { i in _ = try device.send(Counters.action(i), metadata: Counters.metadata(i)) }
    let last = ContinuousClock.now
    let held = try await whenServerHolds(UInt64(count), observer)
    await sync.stop()
    await observer.close()
    progress("… \(lag.value.batches) batches received, at most \(lag.value.maxPending) actions pending after one")
    return SharedSendRun(rate: rate, catchUp: seconds(held - last), cpu: cpu)
  }
}

// MARK: - The run

/// Runs the four measurements (those of `options.parts`) `rounds` times; returns every round's
/// figures by JSON key.
func runSync(_ options: SyncOptions, rounds: Int, scratch: URL) async throws -> [String: [Double]] {
  var figures: [String: [Double]] = [:]
  func add(_ key: String, _ value: Double) { figures[key, default: []].append(value) }
  let parts = options.parts

  // 1. Propagation: two devices, one client each.
  if parts.contains("propagation") {
    figures["pg.sync.propagation.sends"] = [Double(options.propagationSends)]
    figures["pg.sync.propagation.interval"] = [Double(options.interval)]
    try await withClients(2) { clients in
      for round in 0..<rounds {
        let latencies = try await propagationRound(
          round, sends: options.propagationSends, interval: .milliseconds(options.interval), clients: clients,
          directory: scratch.appendingPathComponent("propagation-\(round)"))
        let (p50, p99, slowest) = (percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.max() ?? .nan)
        add("pg.sync.propagation.p50", p50)
        add("pg.sync.propagation.p99", p99)
        add("pg.sync.propagation.max", slowest)
        progress(
          "round \(round + 1): propagation, \(latencies.count) sends every \(options.interval) ms: "
            + String(format: "p50 %.1f ms, p99 %.1f ms, max %.1f ms", p50, p99, slowest))
      }
    }
  }

  // 2. Devices pushing together, one client each.
  if parts.contains("aggregate") {
    figures["pg.sync.devices"] = [Double(options.devices)]
    figures["pg.sync.aggregate.actions"] = [Double(options.devices * options.actionsPerDevice)]
    try await withClients(options.devices) { clients in
      for round in 0..<rounds {
        let run = try await aggregateRound(
          round, perDevice: options.actionsPerDevice, clients: clients,
          directory: scratch.appendingPathComponent("aggregate-\(round)"))
        add("pg.sync.aggregate", run.rate)
        add("pg.sync.aggregate.converged", run.converged)
        add("pg.sync.aggregate.sending", run.sending)
        progress(
          "round \(round + 1): \(options.devices) devices × \(grouped(Double(options.actionsPerDevice))) actions: "
            + "\(grouped(run.rate)) actions/s on the server; "
            + String(format: "sends done after %.2f s, every device caught up after %.2f s", run.sending, run.converged))
      }
    }
  }

  // 3. Rebase: the upstream entries pushed once, then served from memory, and from PostgreSQL.
  if parts.contains("rebase") {
    figures["pg.sync.rebase.pending"] = [Double(options.pending)]
    figures["pg.sync.rebase.upstream"] = [Double(options.upstream)]
    let records = try await withClients(1) { clients in
      try await upstreamRecords(
        options.upstream, client: clients[0], directory: scratch.appendingPathComponent("upstream"))
    }
    for round in 0..<rounds {
      let memory = try await rebaseRound(
        MemoryStreamServer(records), stream: rebaseStream, upstream: options.upstream, pending: options.pending,
        directory: scratch.appendingPathComponent("rebase-memory-\(round)"))
      add("pg.sync.rebase.memory", memory.sync)
      add("pg.sync.rebase.memory.pulled", memory.pulled)
      let postgres = try await withUpstream(records) { server in
        try await rebaseRound(
          server, stream: rebaseStream, upstream: options.upstream, pending: options.pending,
          directory: scratch.appendingPathComponent("rebase-postgres-\(round)"))
      }
      add("pg.sync.rebase.postgres", postgres.sync)
      add("pg.sync.rebase.postgres.pulled", postgres.pulled)
      progress(
        "round \(round + 1): rebase of \(options.pending) pending over \(grouped(Double(options.upstream))) entries: "
          + String(
            format: "from memory %.0f ms (pulled and rebased after %.0f ms), from PostgreSQL %.0f ms (%.0f ms)",
            memory.sync, memory.pulled, postgres.sync, postgres.pulled))
    }
  }

  // 4. Send rates, alternating the order.
  if parts.contains("sends") {
    figures["pg.sync.sends"] = [Double(options.sends)]
    try await withClients(1) { clients in
      for round in 0..<rounds {
        let order = round % 2 == 0 ? SendSubject.allCases : Array(SendSubject.allCases.reversed())
        var rates: [SendSubject: Double] = [:]
        for subject in order {
          let run = try await sharedSendRun(
            subject, count: options.sends, round: round, client: clients[0],
            directory: scratch.appendingPathComponent("sends-\(round)-\(subject.rawValue)"))
          rates[subject] = run.rate
          add("pg.sync.send.\(subject.rawValue)", run.rate)
          if let catchUp = run.catchUp { add("pg.sync.send.catchup", catchUp) }
          let after = run.catchUp.map { String(format: ", the server held all %.2f s after the last send", $0) } ?? ""
          progress("round \(round + 1): send, \(subject.rawValue): \(grouped(run.rate))/s\(after); \(run.cpu.text)")
        }
        if let syncing = rates[.syncing], let alone = rates[.alone] { add("pg.sync.send.ratio", syncing / alone) }
      }
    }
  }
  return figures
}

/// The shared streams' figures as markdown, medians over the rounds (the parts measured).
func printSync(_ figures: [String: [Double]], rounds: Int) {
  func m(_ key: String) -> Double { median(figures[key] ?? []) }
  func ms(_ key: String) -> String { String(format: "%.1f ms", m(key)) }
  print("")
  print("| shared streams | median of \(rounds) |")
  print("|---|---:|")
  if figures["pg.sync.propagation.p50"] != nil {
    print(
      "| propagation, \(grouped(m("pg.sync.propagation.sends"))) sends every \(Int(m("pg.sync.propagation.interval"))) ms: "
        + "p50 / p99 / max | \(ms("pg.sync.propagation.p50")) / \(ms("pg.sync.propagation.p99")) / "
        + "\(ms("pg.sync.propagation.max")) |")
  }
  if figures["pg.sync.aggregate"] != nil {
    print(
      "| \(Int(m("pg.sync.devices"))) devices pushing \(grouped(m("pg.sync.aggregate.actions"))) actions | "
        + "\(grouped(m("pg.sync.aggregate")))/s |")
    print("| … every device caught up after | \(String(format: "%.2f s", m("pg.sync.aggregate.converged"))) |")
  }
  if figures["pg.sync.rebase.memory"] != nil {
    let rebase = "\(grouped(m("pg.sync.rebase.pending"))) pending over \(grouped(m("pg.sync.rebase.upstream"))) entries"
    print("| rebase of \(rebase), from memory | \(ms("pg.sync.rebase.memory")) |")
    print("| … pulled and rebased, before the push | \(ms("pg.sync.rebase.memory.pulled")) |")
    print("| rebase of \(rebase), from PostgreSQL | \(ms("pg.sync.rebase.postgres")) |")
  }
  if figures["pg.sync.send.alone"] != nil {
    print("| `Store.send` (`.normal`), \(grouped(m("pg.sync.sends"))) actions | \(grouped(m("pg.sync.send.store")))/s |")
    print("| `SharedStore.send`, no sync | \(grouped(m("pg.sync.send.alone")))/s |")
    print("| `SharedStore.send` while `syncContinuously` runs | \(grouped(m("pg.sync.send.syncing")))/s |")
    print("| … syncing ÷ alone (median of the rounds' ratios) | \(String(format: "%.2f", m("pg.sync.send.ratio"))) |")
    print("| … the server held all after the last send | \(String(format: "%.2f s", m("pg.sync.send.catchup"))) |")
  }
}
