import Chronicle
import ChronicleLog
import ChroniclePostgres
import Foundation
import PostgresNIO
import Synchronization

// MARK: - bench postgres

/// Shipping to PostgreSQL (`ChroniclePostgres`): how fast a shipper stores a log's entries, and
/// what a shipper following the log in another process costs the app's single `send`s.
///
/// `bench postgres --url postgres://USER:PASSWORD@HOST:PORT/DATABASE [--entries N] [--sends N]
/// [--rounds R] [--scratch DIR]`. The database gets the Chronicle schema (`PostgresSchema.migrate`)
/// and one new log per measurement; nothing else in it is touched. Prints a table of medians.
///
/// - `pg.ship.B`: entries stored per second by one `LogShipper.ship` of a log of `--entries`
///   ledger transfers, batches of B entries.
/// - `pg.send.off` / `pg.send.on`: single `.normal` sends per second into a fresh store, alone and
///   while `LogShipper.follow` runs in a child process over the same log (alternating order);
///   `pg.lag.ms`: how long after the last send the server held every entry.
enum PostgresBench {
  static func run(_ arguments: [String]) throws {
    if arguments.first == "--follow-child" {
      followChild(directory: arguments[1], url: arguments[2])
    }
    var url: String?
    var entries = 100_000
    var sends = 20_000
    var rounds = 3
    var scratch = URL(fileURLWithPath: NSTemporaryDirectory())
    var rest = arguments[...]
    while let flag = rest.popFirst() {
      guard let value = rest.popFirst() else { throw BenchError("\(flag) needs a value") }
      switch flag {
      case "--url": url = value
      case "--entries": entries = Int(value) ?? entries
      case "--sends": sends = Int(value) ?? sends
      case "--rounds": rounds = Int(value) ?? rounds
      case "--scratch": scratch = URL(fileURLWithPath: value)
      default: throw BenchError("unknown option \(flag)")
      }
    }
    guard let url else { throw BenchError("bench postgres needs --url postgres://USER:PASSWORD@HOST:PORT/DATABASE") }
    let configuration = try clientConfiguration(url)
    let client = PostgresClient(configuration: configuration, backgroundLogger: quiet)
    let running = Task { await client.run() }
    defer { running.cancel() }
    try blocking { try await PostgresSchema.migrate(client) }

    var rows: [(String, [Double])] = []
    for batch in [1_000, 4_000] {
      var rates: [Double] = []
      for round in 1...rounds {
        let dir = try Scratch(root: scratch, name: "pg-ship")
        defer { dir.remove() }
        try writeLedgerLog(dir.path, entries: entries)
        let shipper = LogShipper(client: client, options: .init(batchSize: batch))
        let path = dir.url
        let elapsed = try blocking {
          let start = ContinuousClock.now
          let report = try await shipper.ship(directory: path)
          guard report.entriesShipped == entries else { throw BenchError("shipped \(report.entriesShipped) of \(entries)") }
          return (ContinuousClock.now - start).seconds
        }
        rates.append(Double(entries) / elapsed)
        log("  pg ship batch \(batch) round \(round): \(rate(Double(entries) / elapsed))")
      }
      rows.append(("pg.ship.\(batch) (entries/s)", rates))
    }

    var off: [Double] = []
    var on: [Double] = []
    var lags: [Double] = []
    for round in 0..<(rounds * 2) {
      let following = (round % 4 == 1 || round % 4 == 2)
      let dir = try Scratch(root: scratch, name: "pg-send")
      defer { dir.remove() }
      var workload = LedgerWorkload(accounts: 100, seed: UInt64(round + 1))
      let actions = workload.nextActions(sends)
      let store = try ChronicleSystem.store(
        dir.path, reducer: Ledger(), initialState: workload.initialState, options: ChronicleSystem.options())
      var child: Process?
      if following {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["postgres", "--follow-child", dir.path, url]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        _ = pipe.fileHandleForReading.readData(ofLength: 6)  // "ready\n"
        child = process
      }
      let elapsed = try seconds { for action in actions { try store.send(action) } }
      try store.close()
      if let child {
        let written = try ActionLog(directory: dir.url, access: .readOnly)
        let logID = try written.logID() ?? []
        let head = try written.head().seq
        try written.close()
        let lag = try blocking { () async throws -> Double in
          let start = ContinuousClock.now
          while ContinuousClock.now - start < .seconds(120) {
            let rows = try await client.query(
              "SELECT head_seq FROM chronicle.logs WHERE log_id = \(ByteBuffer(bytes: logID))", logger: quiet)
            for try await seq in rows.decode(Int64.self) where UInt64(seq) >= head {
              return (ContinuousClock.now - start).seconds * 1_000
            }
            try await Task.sleep(for: .milliseconds(5))
          }
          throw BenchError("the follower did not catch up within 120 s")
        }
        child.terminate()
        child.waitUntilExit()
        lags.append(lag)
        on.append(Double(sends) / elapsed)
        log("  pg send with a follower: \(rate(Double(sends) / elapsed)), caught up \(Int(lag)) ms after the last send")
      } else {
        off.append(Double(sends) / elapsed)
        log("  pg send alone: \(rate(Double(sends) / elapsed))")
      }
    }
    rows.append(("pg.send.off (sends/s)", off))
    rows.append(("pg.send.on (sends/s)", on))
    rows.append(("pg.lag.ms", lags))
    print("| measure | median | runs |")
    print("|---|---:|---|")
    for (name, values) in rows {
      print("| \(name) | \(grouped(median(values))) | \(values.map { grouped($0) }.joined(separator: ", ")) |")
    }
    let cost = 1 - median(on) / median(off)
    print("\nsend rate with a follower: \(String(format: "%+.1f", -cost * 100)) % (goal: no more than 10 % slower)")
  }

  /// A log of `entries` ledger transfers, written in batches of 1,000 through a store.
  static func writeLedgerLog(_ path: String, entries: Int) throws {
    var workload = LedgerWorkload(accounts: 100)
    let store = try ChronicleSystem.store(
      path, reducer: Ledger(), initialState: workload.initialState, options: ChronicleSystem.options())
    defer { try? store.close() }
    var written = 0
    while written < entries {
      let count = min(1_000, entries - written)
      try store.send(contentsOf: workload.nextActions(count))
      written += count
    }
  }

  /// The child that follows: prints `ready`, follows `directory` until terminated.
  static func followChild(directory: String, url: String) -> Never {
    do {
      let client = PostgresClient(configuration: try clientConfiguration(url), backgroundLogger: quiet)
      let running = Task { await client.run() }
      FileHandle.standardOutput.write(Data("ready\n".utf8))
      try blocking {
        try await LogShipper(client: client).follow(directory: URL(fileURLWithPath: directory))
      }
      running.cancel()
      exit(0)
    } catch {
      FileHandle.standardError.write(Data("follower: \(LogShipper.describe(error))\n".utf8))
      exit(1)
    }
  }

  /// A client configuration for `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (no TLS).
  static func clientConfiguration(_ text: String) throws -> PostgresClient.Configuration {
    guard let url = URLComponents(string: text), let host = url.host, let user = url.user else {
      throw BenchError("\(text): expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")
    }
    return PostgresClient.Configuration(
      host: host, port: url.port ?? 5432, username: user, password: url.password,
      database: String(url.path.dropFirst()), tls: .disable)
  }

  static let quiet: Logger = {
    var logger = Logger(label: "bench.postgres")
    logger.logLevel = .critical
    return logger
  }()

  /// Runs `body` on a task and waits for it.
  static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
      do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
      done.signal()
    }
    done.wait()
    return try box.get()
  }
}

/// A result handed from a task to the thread waiting for it.
private final class ResultBox<T: Sendable>: Sendable {
  private let value = Mutex<Result<T, any Error>?>(nil)
  func set(_ result: Result<T, any Error>) { value.withLock { $0 = result } }
  func get() throws -> T { try value.withLock { $0! }.get() }
}
