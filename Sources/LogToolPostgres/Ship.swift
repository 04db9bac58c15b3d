#if Postgres && LogTool
import ArgumentParser
import ChronicleLog
import ChroniclePostgres
import Foundation
import LogToolKit
import PostgresNIO
import Synchronization

// MARK: - logtool ship

/// `logtool ship LOG --to postgres://…`: ships the log's new entries and checkpoints to PostgreSQL,
/// once or, with `--follow`, continuously.
public struct Ship: AsyncParsableCommand {
  /// `ship`.
  public static let configuration = CommandConfiguration(
    abstract: "Ship the log's new entries and checkpoints to PostgreSQL; with --follow, keep shipping.",
    discussion: """
      Each batch is one transaction the server checks against its stored chain; shipping again \
      sends only what the server lacks. Shipping once reports progress on standard error (after \
      the first batch, then at most once a second). --follow ships as the log grows, retries with a growing \
      delay (up to 5 s) while the server is unreachable, reports progress and failures on standard \
      error (an outage as it starts), and exits 0 on SIGINT or SIGTERM. Each step with the server \
      has a deadline (--timeout): past it, ship ends with exit 2 and --follow retries. Checkpoints \
      older than the first entry the server holds (a log compacted before its first ship) stay on \
      the device: the server could not check them. Exit 1: a fork, a truncated log or a refused \
      batch; exit 2: a bad URL, an unreachable or silent server, a wrong password, a missing or \
      newer schema.
      """)

  /// The log directory.
  @OptionGroup public var log: LogOptions
  /// The server.
  @Option(name: .customLong("to"), help: "The server: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
  public var url: String
  /// Whether to keep shipping.
  @Flag(name: .shortAndLong, help: "Keep shipping new entries until interrupted.")
  public var follow = false
  /// Whether to create or migrate the schema first.
  @Flag(help: "Create the Chronicle schema on the server, or migrate it, before shipping.")
  public var migrate = false
  /// The batch size.
  @Option(help: "The most entries one transaction carries (1…4000).")
  public var batchSize = 1_000
  /// The deadline of each step with the server.
  @Option(
    help: ArgumentHelp(
      "Seconds each step with the server may take (connecting, one batch); longer is a failure: exit 2, or a retry with --follow.",
      valueName: "seconds"))
  public var timeout: Double = 30
  /// `--json`.
  @OptionGroup public var output: OutputOptions

  /// Creates the command (argument parsing does this).
  public init() {}

  /// Checks the batch size.
  public func validate() throws {
    if !(1...4_000).contains(batchSize) { throw ValidationError("--batch-size must be 1…4000 (got \(batchSize))") }
  }

  /// Ships.
  public func run() async throws {
    let address = try ServerAddress(url, timeout: timeout)
    let directory = log.url
    // The log first: a bad path or a log without an identifier fails before any connection.
    let device = try log.openReadOnly()
    let logID = try device.logID()
    try device.close()
    guard let logID else { throw LogToolError.badInput(ShipError.noLogID(path: log.path).description) }
    let options = LogShipper.Options(batchSize: batchSize, stepTimeout: address.timeout)
    let (follow, migrate, json) = (self.follow, self.migrate, output.json)
    try await address.preflight(migrate: migrate)
    var total = try await withClient(address) { client in
      let shipper = LogShipper(client: client, options: options)
      do {
        if !follow {
          let progress = ShipProgress(json: json)
          let report = try await shipper.ship(directory: directory, progress: { progress.batchCommitted($0) })
          return ShipTotals(report)
        }
        return try await Self.follow(shipper, directory: directory, json: json)
      } catch {
        throw address.failure(error)
      }
    }
    total.logID = logID.hexString
    if output.json {
      printOutput(
        jsonLine([
          "logID": total.logID, "entriesShipped": total.entries, "batches": total.batches,
          "checkpointsShipped": total.checkpoints, "serverHead": total.serverHead,
        ]))
    } else {
      printOutput(
        "log \(total.logID): shipped \(total.entries) entries in \(total.batches) batches and "
          + "\(total.checkpoints) checkpoints to \(address.display); the server holds entries up to \(total.serverHead)")
    }
  }

  /// Follows until SIGINT or SIGTERM, printing each event on standard error (a JSON line each
  /// with `json`); returns the totals.
  static func follow(_ shipper: LogShipper, directory: URL, json: Bool) async throws -> ShipTotals {
    let totals = TotalsBox()
    let task = Task {
      try await shipper.follow(directory: directory) { event in
        totals.add(event)
        printError(describe(event, json: json))
      }
    }
    let signals = StopSignals { task.cancel() }
    defer { signals.cancel() }
    try await task.value
    return totals.value
  }

  /// One line for `event`.
  static func describe(_ event: ShipEvent, json: Bool) -> String {
    switch event {
    case .shipped(let report):
      json
        ? jsonLine([
          "event": "shipped", "logID": report.logID, "entries": report.entriesShipped, "batches": report.batches,
          "checkpoints": report.checkpointsShipped, "serverHead": report.serverHead,
        ])
        : "shipped \(report.entriesShipped) entries, \(report.checkpointsShipped) checkpoints; server head \(report.serverHead)"
    case .retrying(let error, let attempt, let delay):
      json
        ? jsonLine([
          "event": "retrying", "attempt": attempt, "error": LogShipper.describe(error),
          "delayMilliseconds": Int(delay / .milliseconds(1)),
        ])
        : "failed (attempt \(attempt)): \(LogShipper.describe(error)); retrying in \(delay)"
    case .recovered(let failures):
      json ? jsonLine(["event": "recovered", "failures": failures]) : "shipping again after \(failures) failed attempts"
    }
  }
}

// MARK: - Signals

/// Calls a handler on the first SIGINT or SIGTERM while it exists (the signals are ignored
/// otherwise until ``cancel()``, which restores their default action).
final class StopSignals {
  private var sources: [any DispatchSourceSignal] = []

  init(_ handler: @escaping @Sendable () -> Void) {
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "logtool.ship.signals"))
      source.setEventHandler(handler: handler)
      source.resume()
      sources.append(source)
    }
  }

  func cancel() {
    for source in sources { source.cancel() }
    sources = []
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
  }
}

// MARK: - Totals

/// What a `ship` did in all.
struct ShipTotals: Sendable {
  var logID = ""
  var entries = 0
  var batches = 0
  var checkpoints = 0
  var serverHead: UInt64 = 0

  init() {}

  init(_ report: ShipReport) {
    add(report)
  }

  mutating func add(_ report: ShipReport) {
    logID = report.logID
    entries += report.entriesShipped
    batches += report.batches
    checkpoints += report.checkpointsShipped
    serverHead = report.serverHead
  }
}

/// The totals of a following shipper, added to by its event handler.
final class TotalsBox: Sendable {
  private let totals = Mutex(ShipTotals())

  func add(_ event: ShipEvent) {
    if case .shipped(let report) = event { totals.withLock { $0.add(report) } }
  }

  var value: ShipTotals { totals.withLock { $0 } }
}

// MARK: - Progress

/// The progress lines of a `ship` without `--follow`, on standard error: after the first batch,
/// then at most once a second (a JSON line each with `--json`).
final class ShipProgress: Sendable {
  private let json: Bool
  private let lastLine = Mutex<ContinuousClock.Instant?>(nil)

  init(json: Bool) { self.json = json }

  /// Called after each committed batch with what the ship stored so far.
  func batchCommitted(_ report: ShipReport) {
    let now = ContinuousClock.now
    let due = lastLine.withLock { last -> Bool in
      guard last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
      last = now
      return true
    }
    guard due else { return }
    printError(
      json
        ? jsonLine([
          "event": "progress", "logID": report.logID, "entries": report.entriesShipped, "batches": report.batches,
          "serverHead": report.serverHead,
        ])
        : "shipped \(report.entriesShipped) entries in \(report.batches) batch\(report.batches == 1 ? "" : "es") so far; "
          + "server head \(report.serverHead)")
  }
}
#endif  // Postgres && LogTool
