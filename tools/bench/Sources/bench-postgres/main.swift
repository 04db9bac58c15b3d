import Chronicle
import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO

// `bench-postgres`: shipping to PostgreSQL (docs/postgres.md, "Performance").
//
// Starts a private PostgreSQL 15 cluster the way ChroniclePostgresTests do (PostgresServer.swift is
// the tests' own file: initdb into a temporary directory, a free loopback port, as `chronicle-pg`
// when run as root; stopped and removed at the end), then measures, in one run and side by side:
//
// 1. shipping throughput: `LogShipper.ship` of a finished log into an empty database, per batch size
//    (two batches in flight, the default), and with batches of 1,000 one at a time;
// 2. the app's `send` rate (`.normal`, one action per call) with and without a `LogShipper.follow`
//    shipping the same log from the same process, alternating which goes first in each round;
// 3. shared streams (Sync.swift): propagation between two devices, eight devices pushing together,
//    a rebase of pending actions over upstream entries, and what syncing costs `send`.
//
// Every figure is the median over the rounds.

// MARK: - Options

struct BenchOptions {
  var entries = 100_000
  var sends = 40_000
  var rounds = 5
  var batchSizes = [100, 1_000, 4_000]
  var pollInterval = 100
  /// Where to write every round's figures as JSON, for `bench`'s docs/performance.md.
  var json: URL?
  /// Whether to measure shipping (the `pg.ship…` and `pg.send…` figures).
  var ship = true
  /// The shared streams' workloads (Sync.swift).
  var sync = SyncOptions()

  static let usage = """
    usage: bench-postgres [--entries N] [--sends N] [--rounds N] [--batch-sizes A,B,…] [--poll-ms N] [--quick]
                          [--no-sync | --sync-only] [--sync-sends N] [--sync-actions N] [--propagation-sends N]
                          [--sync-parts LIST]
                          [--json PATH]

      --entries N         entries in the log shipped for the throughput rows (100000)
      --sends N           actions sent one by one for the send-rate rows (40000)
      --rounds N          rounds; each figure is the median (5)
      --batch-sizes L     the shipper batch sizes measured (100,1000,4000)
      --poll-ms N         the follower's poll interval in milliseconds (100, the default of LogShipper)
      --quick             10000 entries, 10000 sends, 3 rounds, batch size 1000 only; shared streams:
                          100 propagation sends, 1000 actions per device, 5000 sync sends
      --no-sync           leave out the shared streams
      --sync-only         measure the shared streams only, not shipping
      --sync-sends N      actions sent one by one for the shared-store send-rate rows (20000)
      --sync-actions N    actions each of the 8 devices sends in the aggregate rows (5000)
      --propagation-sends N
                          sends of device A per propagation round, one every 20 ms (300)
      --sync-parts LIST   the shared-stream measurements to run, of propagation,aggregate,rebase,sends (all)
      --json PATH         also write every round's figures to PATH, as `bench` reads them: an object
                          of arrays, keyed pg.ship@SIZE, pg.server@SIZE, pg.shipper@SIZE (entries/s,
                          µs of CPU per entry), pg.send.alone, pg.send.following (sends/s),
                          pg.catchup (s), pg.entries and pg.sends; pg.serial@1000, pg.serverserial@1000
                          (batches of 1,000 one at a time, when 1000 is among the batch sizes);
                          the shared streams' figures under pg.sync.* (Sync.swift, runSync)
    """

  static func parse(_ arguments: [String]) throws -> BenchOptions {
    var options = BenchOptions()
    var rest = arguments[...]
    func number(_ name: String) throws -> Int {
      guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
        throw BenchFailure("\(name) needs a positive number")
      }
      return value
    }
    while let argument = rest.popFirst() {
      switch argument {
      case "--entries": options.entries = try number(argument)
      case "--sends": options.sends = try number(argument)
      case "--rounds": options.rounds = try number(argument)
      case "--poll-ms": options.pollInterval = try number(argument)
      case "--no-sync": options.sync.enabled = false
      case "--sync-only": options.ship = false
      case "--sync-sends": options.sync.sends = try number(argument)
      case "--sync-actions": options.sync.actionsPerDevice = try number(argument)
      case "--propagation-sends": options.sync.propagationSends = try number(argument)
      case "--sync-parts":
        guard let text = rest.popFirst() else { throw BenchFailure("--sync-parts needs a list") }
        let parts = Set(text.split(separator: ",").map(String.init))
        guard !parts.isEmpty, parts.isSubset(of: SyncOptions.allParts) else {
          throw BenchFailure("--sync-parts: a list of \(SyncOptions.allParts.sorted().joined(separator: ", ")): \(text)")
        }
        options.sync.parts = parts
      case "--json":
        guard let path = rest.popFirst() else { throw BenchFailure("--json needs a path") }
        options.json = URL(fileURLWithPath: path)
      case "--batch-sizes":
        guard let text = rest.popFirst() else { throw BenchFailure("--batch-sizes needs a list") }
        let sizes = text.split(separator: ",").compactMap { Int($0) }
        guard !sizes.isEmpty, sizes.allSatisfy({ $0 > 0 }) else {
          throw BenchFailure("--batch-sizes: not a list of positive numbers: \(text)")
        }
        options.batchSizes = sizes
      case "--quick":
        options.entries = 10_000
        options.sends = 10_000
        options.rounds = 3
        options.batchSizes = [1_000]
        options.sync.propagationSends = SyncOptions.quick.propagationSends
        options.sync.actionsPerDevice = SyncOptions.quick.actionsPerDevice
        options.sync.sends = SyncOptions.quick.sends
      case "-h", "--help":
        print(usage)
        exit(0)
      default: throw BenchFailure("unknown argument \(argument)\n\(usage)")
      }
    }
    return options
  }
}

/// A failure of the benchmark itself, one line.
struct BenchFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

// MARK: - The app

/// Accounts and deposits: small CBOR entries with audit metadata, as a point-of-sale device writes.
struct Accounts: Reducer {
  struct State: Codable, Sendable, Equatable { var balances: [String: Int] = [:] }

  enum Action: Codable, Sendable, Equatable {
    case deposit(account: String, cents: Int)
    case transfer(from: String, to: String, cents: Int)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .deposit(let account, let cents): state.balances[account, default: 0] += cents
    case .transfer(let from, let to, let cents):
      state.balances[from, default: 0] -= cents
      state.balances[to, default: 0] += cents
    }
    return .none
  }

  /// Action `i` of the workload.
  static func action(_ i: Int) -> Action {
    i % 4 == 0
      ? .transfer(from: "acct-\(i % 97)", to: "acct-\((i * 7) % 97)", cents: i % 5_000)
      : .deposit(account: "acct-\(i % 97)", cents: 100 + i % 900)
  }

  /// The metadata of action `i`.
  static func metadata(_ i: Int) -> [String: String] { ["user": ["ann", "bob", "eve"][i % 3], "till": "3"] }
}

typealias AccountsStore = Store<Accounts.State, Accounts.Action>

/// Sends action `i` with the synchronous `send`, as an app's code that does not await does.
func sendAction(_ store: AccountsStore, _ i: Int) throws {
  _ = try store.send(Accounts.action(i), metadata: Accounts.metadata(i))
}

/// Opens (creating) the app's store in `directory` with `.normal` durability.
func openStore(_ directory: URL) throws -> AccountsStore {
  try Store(
    initialState: Accounts.State(), reducer: Accounts(), log: .directory(directory),
    options: StoreOptions(durability: .normal))
}

// MARK: - Measuring

/// Seconds `body` takes.
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
  let start = ContinuousClock.now
  try await body()
  let elapsed = ContinuousClock.now - start
  return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// The median of `values`.
func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return .nan }
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// `value` with thousands separators and no decimals.
func grouped(_ value: Double) -> String {
  let formatter = NumberFormatter()
  formatter.numberStyle = .decimal
  formatter.maximumFractionDigits = 0
  return formatter.string(from: NSNumber(value: value)) ?? "\(Int(value))"
}

/// The load average now (1, 5, 15 minutes), as `uptime` prints it.
func loadAverage() -> String {
  guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
  return text.split(separator: " ").prefix(3).joined(separator: ", ")
}

/// CPU seconds (user + system) used so far by the running processes named `postgres` (the
/// cluster's server and its backends): what the server spends, whatever the machine's load.
func serverCPUSeconds() -> Double {
  guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return .nan }
  var ticks = 0
  for name in names where Int(name) != nil {
    guard let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")"), stat.contains("(postgres)")
    else { continue }
    // The fields after the command: state is field 3, utime 14, stime 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { continue }
    ticks += user + system
  }
  return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// CPU seconds (user + system) this process has used so far.
func ownCPUSeconds() -> Double {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// Prints `line` on standard error (progress; the results go to standard output).
func progress(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}

// MARK: - PostgreSQL

let quietLogger: Logger = {
  var logger = Logger(label: "chronicle.bench.postgres")
  logger.logLevel = .critical
  return logger
}()

/// Runs `body` with a running client of a new, migrated database of the cluster.
func withDatabase<R: Sendable>(_ body: (PostgresClient) async throws -> R) async throws -> R {
  let database = try await PostgresServer.shared.makeDatabase()
  let client = PostgresClient(configuration: database.configuration, backgroundLogger: quietLogger)
  return try await withThrowingTaskGroup(of: Void.self, returning: R.self) { group in
    group.addTask { await client.run() }
    defer { group.cancelAll() }
    try await PostgresSchema.migrate(client)
    return try await body(client)
  }
}

/// The server's head for the only log of the database (0 when it has none yet).
func serverHead(_ client: PostgresClient) async throws -> Int64 {
  let rows = try await client.query("SELECT coalesce(max(head_seq), 0)::bigint FROM chronicle.logs", logger: quietLogger)
  for try await head in rows.decode(Int64.self) { return head }
  return 0
}

// MARK: - Runs

/// What one ship measured.
struct ShipRun {
  /// Entries per second.
  var rate: Double
  /// Microseconds of the server's CPU per entry.
  var serverMicros: Double
  /// Microseconds of the shipper's (this process's) CPU per entry.
  var shipperMicros: Double
}

/// Ships the finished log in `source` into an empty database with `batchSize`, `inFlight` batches
/// on the server at once.
func shipOnce(_ source: URL, entries: Int, batchSize: Int, inFlight: Int = 2) async throws -> ShipRun {
  try await withDatabase { client in
    let shipper = LogShipper(client: client, options: LogShipper.Options(batchSize: batchSize, batchesInFlight: inFlight))
    var report: ShipReport?
    let (server, own) = (serverCPUSeconds(), ownCPUSeconds())
    let elapsed = try await seconds { report = try await shipper.ship(directory: source) }
    let (serverUsed, ownUsed) = (serverCPUSeconds() - server, ownCPUSeconds() - own)
    guard report?.entriesShipped == entries, try await serverHead(client) == Int64(entries) else {
      throw BenchFailure("shipped \(report?.entriesShipped ?? 0) of \(entries) entries")
    }
    return ShipRun(
      rate: Double(entries) / elapsed, serverMicros: serverUsed * 1e6 / Double(entries),
      shipperMicros: ownUsed * 1e6 / Double(entries))
  }
}

/// What one send-rate run measured.
struct SendRun {
  /// Sends per second.
  var rate: Double
  /// With a follower: seconds from the last send until the server held every entry.
  var catchUp: Double?
}

/// Sends `count` actions one by one into a new store in `directory`: with `following`, while a
/// `LogShipper.follow` of the same process ships the log to a new database.
func sendRun(_ directory: URL, count: Int, following: Bool, pollInterval: Int) async throws -> SendRun {
  defer { try? FileManager.default.removeItem(at: directory) }
  let store = try openStore(directory)
  defer { try? store.close() }
  // The first entry creates the log, so the follower has a log to open.
  try sendAction(store, 0)
  func sendAll() throws {
    for i in 1..<count { try sendAction(store, i) }
  }
  guard following else { return SendRun(rate: Double(count - 1) / (try await seconds { try sendAll() })) }
  return try await withDatabase { client in
    let shipper = LogShipper(
      client: client, options: LogShipper.Options(pollInterval: .milliseconds(pollInterval)))
    let follower = Task.detached { try await shipper.follow(directory: directory) }
    defer { follower.cancel() }
    // Wait until the follower holds the first entry: it runs before the timed sends begin.
    while try await serverHead(client) < 1 { try await Task.sleep(for: .milliseconds(10)) }
    let elapsed = try await seconds { try sendAll() }
    let catchUp = try await seconds {
      let deadline = ContinuousClock.now + .seconds(300)
      while try await serverHead(client) < Int64(count) {
        guard ContinuousClock.now < deadline else { throw BenchFailure("the follower did not catch up in 300 s") }
        try await Task.sleep(for: .milliseconds(5))
      }
    }
    follower.cancel()
    _ = await follower.result
    return SendRun(rate: Double(count - 1) / elapsed, catchUp: catchUp)
  }
}

// MARK: - Main

let options: BenchOptions
do {
  options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
  progress("bench-postgres: \(error)")
  exit(2)
}

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
  "chronicle-bench-pg-\(getpid())", isDirectory: true)

do {
  try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: scratch) }
  let loadBefore = loadAverage()
  let cluster = try await PostgresServer.shared.start()
  progress("cluster on 127.0.0.1:\(cluster.port), load \(loadBefore)")

  var shipRates: [Int: [Double]] = [:]
  var serverCPU: [Int: [Double]] = [:]
  var shipperCPU: [Int: [Double]] = [:]
  var serialRates: [Double] = []
  var serialServerCPU: [Double] = []
  var plain: [Double] = []
  var followed: [Double] = []
  var catchUps: [Double] = []
  if options.ship {
    // The log the throughput rows ship: written once, shipped into a new database each time.
    let source = scratch.appendingPathComponent("source", isDirectory: true)
    let built = try await seconds {
      let store = try openStore(source)
      var i = 0
      while i < options.entries {
        let n = min(1_000, options.entries - i)
        for j in i..<i + n { try sendAction(store, j) }
        i += n
      }
      try store.close()
    }
    progress("wrote a log of \(grouped(Double(options.entries))) entries in \(String(format: "%.1f", built)) s")

    for round in 0..<options.rounds {
      for batchSize in options.batchSizes {
        let run = try await shipOnce(source, entries: options.entries, batchSize: batchSize)
        shipRates[batchSize, default: []].append(run.rate)
        serverCPU[batchSize, default: []].append(run.serverMicros)
        shipperCPU[batchSize, default: []].append(run.shipperMicros)
        progress(
          "round \(round + 1): ship, batch \(batchSize): \(grouped(run.rate)) entries/s; CPU per entry: server "
            + String(format: "%.0f µs, shipper %.0f µs", run.serverMicros, run.shipperMicros))
        if batchSize == 1_000 {
          let serial = try await shipOnce(source, entries: options.entries, batchSize: batchSize, inFlight: 1)
          serialRates.append(serial.rate)
          serialServerCPU.append(serial.serverMicros)
          progress(
            "round \(round + 1): ship, batch 1000, one in flight: \(grouped(serial.rate)) entries/s; CPU per entry: server "
              + String(format: "%.0f µs", serial.serverMicros))
        }
      }
      for following in round % 2 == 0 ? [false, true] : [true, false] {
        let directory = scratch.appendingPathComponent("send-\(round)-\(following)", isDirectory: true)
        let run = try await sendRun(
          directory, count: options.sends, following: following, pollInterval: options.pollInterval)
        if following {
          followed.append(run.rate)
          catchUps.append(run.catchUp ?? .nan)
        } else {
          plain.append(run.rate)
        }
        let after = run.catchUp.map { String(format: ", shipped all %.2f s after the last send", $0) } ?? ""
        progress("round \(round + 1): send \(following ? "while following" : "alone"): \(grouped(run.rate))/s\(after)")
      }
    }
  }
  // Shared streams; `runSync` runs off the main actor, which stays free for the stores' observers.
  // A watchdog outside Swift concurrency ends the run should a round never end, so that `bench`
  // goes on without these rows (the cluster is stopped at exit).
  var syncFigures: [String: [Double]] = [:]
  if options.sync.enabled {
    let limit = 1_800
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit)) {
      progress("bench-postgres: the shared-stream measurements did not end within \(limit / 60) minutes")
      exit(1)
    }
    syncFigures = try await runSync(options.sync, rounds: options.rounds, scratch: scratch)
  }
  await PostgresServer.shared.shutDown()

  if let json = options.json {
    var figures = syncFigures
    if options.ship {
      figures["pg.send.alone"] = plain
      figures["pg.send.following"] = followed
      figures["pg.catchup"] = catchUps
      figures["pg.entries"] = [Double(options.entries)]
      figures["pg.sends"] = [Double(options.sends)]
    }
    if !serialRates.isEmpty {
      figures["pg.serial@1000"] = serialRates
      figures["pg.serverserial@1000"] = serialServerCPU
    }
    for batchSize in options.batchSizes where options.ship {
      figures["pg.ship@\(batchSize)"] = shipRates[batchSize]
      figures["pg.server@\(batchSize)"] = serverCPU[batchSize]
      figures["pg.shipper@\(batchSize)"] = shipperCPU[batchSize]
    }
    try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys]).write(to: json)
  }

  if options.ship {
    let cost = 1 - median(followed) / median(plain)
    print("| `ship`, \(grouped(Double(options.entries))) entries | entries/s | server CPU per entry | shipper CPU per entry |")
    print("|---|---:|---:|---:|")
    for batchSize in options.batchSizes {
      print(
        "| batch \(grouped(Double(batchSize))) | \(grouped(median(shipRates[batchSize] ?? []))) | "
          + String(format: "%.0f µs | %.0f µs |", median(serverCPU[batchSize] ?? []), median(shipperCPU[batchSize] ?? [])))
    }
    if !serialRates.isEmpty {
      print(
        "| batch 1,000, one in flight | \(grouped(median(serialRates))) | "
          + String(format: "%.0f µs | |", median(serialServerCPU)))
    }
    print("")
    print("| measurement | median of \(options.rounds) |")
    print("|---|---:|")
    print("| `send` (`.normal`), \(grouped(Double(options.sends))) actions, alone | \(grouped(median(plain)))/s |")
    print("| `send` (`.normal`) while `follow` ships the log | \(grouped(median(followed)))/s |")
    print("| cost of following on `send` | \(String(format: "%.1f", cost * 100)) % |")
    print("| follower done after the last send | \(String(format: "%.2f", median(catchUps))) s |")
  }
  if options.sync.enabled { printSync(syncFigures, rounds: options.rounds) }
  print("")
  print("load average before: \(loadBefore); after: \(loadAverage())")
} catch {
  await PostgresServer.shared.shutDown()
  progress("bench-postgres: \(error)")
  exit(1)
}
