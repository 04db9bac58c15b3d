import Foundation

/// Shipping to PostgreSQL in a full run: `bench` never builds postgres-nio, so it runs
/// the package's other executable, `bench-postgres`, when it was built beside it, and reads the
/// figures it writes with `--json` (every round's, so that the medians are taken here as for every
/// other row). `bench-postgres` starts and removes its own private cluster; its progress shows on
/// standard error as it runs.
///
/// Keys: `pg.ship@SIZE`, `pg.server@SIZE`, `pg.shipper@SIZE` per batch size, `pg.send.alone`,
/// `pg.send.following`, `pg.catchup`, `pg.entries`, `pg.sends`, `pg.serial@1000` and
/// `pg.serverserial@1000` (batches of 1,000 one at a time). Shared streams (bench-postgres'
/// Sync.swift), per round: `pg.sync.propagation.p50`, `.p99`, `.max` (ms, send on one device →
/// another's observer); `pg.sync.aggregate` (actions/s of 8 devices pushing together),
/// `pg.sync.aggregate.converged` (s); `pg.sync.rebase.memory`, `.memory.pulled`, `.postgres`,
/// `.postgres.pulled` (ms); `pg.sync.send.store`, `.alone`, `.syncing` (sends/s), `.ratio`
/// (syncing ÷ alone), `.catchup` (s); and the sizes `pg.sync.propagation.sends`,
/// `pg.sync.propagation.interval`, `pg.sync.devices`, `pg.sync.aggregate.actions`,
/// `pg.sync.rebase.pending`, `pg.sync.rebase.upstream`, `pg.sync.sends`.
struct PostgresWorkloads {
  let config: Config

  /// The batch sizes measured; the first is `LogShipper`'s default, which decides the target.
  static let batchSizes = [1_000, 4_000]

  /// `bench-postgres` in the directory of this executable, if it was built.
  static var executable: URL? {
    let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    let sibling = own.deletingLastPathComponent().appendingPathComponent("bench-postgres")
    return FileManager.default.isExecutableFile(atPath: sibling.path) ? sibling : nil
  }

  var arguments: [String] {
    config.quick
      ? ["--quick"]
      : ["--entries", "40000", "--sends", "60000", "--rounds", "5",
        "--batch-sizes", Self.batchSizes.map(String.init).joined(separator: ",")]
  }

  /// Runs `bench-postgres` and adds its figures to `results`; returns why nothing was measured,
  /// or `nil` when it was.
  func run(into results: inout Results) throws -> String? {
    guard config.postgres else { return "Not measured in this run (`--no-postgres`)." }
    guard let executable = Self.executable else {
      log("bench-postgres is not built: the PostgreSQL rows are left out")
      return """
        Not measured in this run: `bench-postgres` was not built beside `bench` \
        (`swift build -c release --package-path tools/bench --product bench-postgres`; \
        PostgreSQL from `tools/setup`).
        """
    }
    let json = config.scratchRoot.appendingPathComponent("chronicle-bench-\(getpid())-postgres.json")
    defer { try? FileManager.default.removeItem(at: json) }
    log("shipping to PostgreSQL: bench-postgres \((arguments + ["--json", "…"]).joined(separator: " "))")
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments + ["--json", json.path]
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      // The other rows were measured: keep them, and say why these are missing.
      log("bench-postgres exited with status \(process.terminationStatus): the PostgreSQL rows are left out")
      return "Not measured in this run: `bench-postgres` exited with status \(process.terminationStatus) (its error is in the run's output)."
    }
    guard let figures = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: [Double]] else {
      throw BenchError("\(json.path): not the object of arrays bench-postgres writes")
    }
    for (key, values) in figures { values.forEach { results.add(key, $0) } }
    return nil
  }
}

extension Results {
  /// Shipping's targets, over `bench-postgres`'s figures.
  func postgresTargets() -> [Target] {
    let batch = PostgresWorkloads.batchSizes[0]
    let shipped = self["pg.ship@\(batch)"]
    let others = PostgresWorkloads.batchSizes.dropFirst().compactMap { size in
      self["pg.ship@\(size)"].map { "batches of \(grouped(Double(size))): \(rate($0))" }
    }
    let server = self["pg.server@\(batch)"].map { String(format: "; the server's CPU per entry %.0f µs", $0) } ?? ""
    let alone = self["pg.send.alone"]
    let following = self["pg.send.following"]
    var share: Double?
    if let alone, let following { share = following / alone }
    return [
      Target(
        name: "shipping to a local PostgreSQL ≥ 50,000 entries/s (batches of \(grouped(Double(batch))), `LogShipper`'s default)",
        measured: shipped.map { "\(rate($0))" + (others.isEmpty ? "" : " (\(others.joined(separator: ", ")))") + server } ?? "–",
        passed: shipped.map { $0 >= 50_000 }, profile: nil),
      Target(
        name: "`send` (`.normal`) while a `LogShipper` follows the log ≥ 90 % of the rate alone",
        measured: share.map { "\(percent($0)) (\(rate(following)) vs \(rate(alone)))" } ?? "–",
        passed: share.map { $0 >= 0.9 }, profile: nil),
    ] + sharedStreamTargets()
  }

  /// Shared streams' targets, over `bench-postgres`'s `pg.sync.*` figures.
  func sharedStreamTargets() -> [Target] {
    let (p50, p99) = (self["pg.sync.propagation.p50"], self["pg.sync.propagation.p99"])
    var propagation: String?
    if let p50, let p99 { propagation = "p50 \(milliseconds(p50)), p99 \(milliseconds(p99))" }
    let devices = self["pg.sync.devices"].map { grouped($0) } ?? "8"
    let aggregate = self["pg.sync.aggregate"]
    let pending = self["pg.sync.rebase.pending"].map { grouped($0) } ?? "1,000"
    let upstream = self["pg.sync.rebase.upstream"].map { grouped($0) } ?? "10,000"
    let rebase = self["pg.sync.rebase.memory"]
    let overPostgres = self["pg.sync.rebase.postgres"].map { "; from PostgreSQL: \(milliseconds($0))" } ?? ""
    let ratio = self["pg.sync.send.ratio"]
    let store = self["pg.sync.send.store"].map { "; a plain `Store`: \(rate($0))" } ?? ""
    return [
      Target(
        name: "shared stream: a send on one device reaches another's observer in p50 < 50 ms, p99 < 250 ms",
        measured: propagation ?? "–",
        passed: p50.flatMap { p50 in p99.map { p50 < 50 && $0 < 250 } }, profile: nil),
      Target(
        name: "shared stream: \(devices) devices pushing together ≥ 5,000 actions/s on the server",
        measured: aggregate.map { rate($0) } ?? "–",
        passed: aggregate.map { $0 >= 5_000 }, profile: nil),
      Target(
        name: "shared stream: rebase of \(pending) pending actions over \(upstream) upstream entries < 200 ms (served from memory)",
        measured: rebase.map { milliseconds($0) + overPostgres } ?? "–",
        passed: rebase.map { $0 < 200 }, profile: nil),
      Target(
        name: "shared stream: `send` while `syncContinuously` runs ≥ 85 % of the rate without sync",
        measured: ratio.map {
          "\(percent($0)) (\(rate(self["pg.sync.send.syncing"])) vs \(rate(self["pg.sync.send.alone"]))\(store))"
        } ?? "–",
        passed: ratio.map { $0 >= 0.85 }, profile: nil),
    ]
  }
}

extension Report {
  /// Shipping's rows: per batch size, and `send` alone and while followed.
  var postgresTable: Table {
    var table = Table("figure", "median")
    let entries = results["pg.entries"].map { grouped($0) } ?? "–"
    for size in PostgresWorkloads.batchSizes where results["pg.ship@\(size)"] != nil {
      let cpu = String(
        format: "server %.0f µs, shipper %.0f µs", results["pg.server@\(size)"] ?? .nan,
        results["pg.shipper@\(size)"] ?? .nan)
      table.add(
        "`ship` of \(entries) entries, batches of \(grouped(Double(size))), two in flight", rate(results["pg.ship@\(size)"]))
      table.add("… CPU per entry", cpu)
    }
    if let serial = results["pg.serial@1000"] {
      table.add("`ship` of \(entries) entries, batches of 1,000, one at a time (`batchesInFlight: 1`)", rate(serial))
      table.add(
        "… the server's CPU per entry", String(format: "%.0f µs", results["pg.serverserial@1000"] ?? .nan))
    }
    let sends = results["pg.sends"].map { grouped($0) } ?? "–"
    table.add("`send` (`.normal`, one action per call), \(sends) actions, alone", rate(results["pg.send.alone"]))
    table.add("… while a `LogShipper.follow` ships the same log", rate(results["pg.send.following"]))
    table.add(
      "… follower done after the last send", results["pg.catchup"].map { String(format: "%.2f s", $0) } ?? "–")
    if results["pg.sync.aggregate"] != nil || results["pg.sync.propagation.p50"] != nil {
      addSharedStreamRows(to: &table)
    }
    return table
  }

  /// Shared streams' rows: propagation, devices pushing together, rebase, and `send` while syncing.
  func addSharedStreamRows(to table: inout Table) {
    func count(_ key: String) -> String { results[key].map { grouped($0) } ?? "–" }
    table.add(
      "shared stream, send → another device's observer (\(count("pg.sync.propagation.sends")) sends every "
        + "\(count("pg.sync.propagation.interval")) ms): p50 / p99 / max",
      [milliseconds(results["pg.sync.propagation.p50"]), milliseconds(results["pg.sync.propagation.p99"]),
        milliseconds(results["pg.sync.propagation.max"])].joined(separator: " / "))
    table.add(
      "shared stream, \(count("pg.sync.devices")) devices pushing \(count("pg.sync.aggregate.actions")) actions together "
        + "(one client each): on the server", rate(results["pg.sync.aggregate"]))
    table.add("… every device holding them all after", secondsText(results["pg.sync.aggregate.converged"]))
    let rebase = "\(count("pg.sync.rebase.pending")) pending actions over \(count("pg.sync.rebase.upstream")) entries"
    table.add("shared stream, `sync` rebasing \(rebase), served from memory", milliseconds(results["pg.sync.rebase.memory"]))
    table.add("… of which pulling and rebasing, before the push", milliseconds(results["pg.sync.rebase.memory.pulled"]))
    table.add("… the same from PostgreSQL", milliseconds(results["pg.sync.rebase.postgres"]))
    table.add("`Store.send` (`.normal`), \(count("pg.sync.sends")) actions (counters)", rate(results["pg.sync.send.store"]))
    table.add("`SharedStore.send`, no sync", rate(results["pg.sync.send.alone"]))
    table.add("… while `syncContinuously` runs against PostgreSQL", rate(results["pg.sync.send.syncing"]))
    table.add("… syncing ÷ alone (median of the rounds' ratios)", results["pg.sync.send.ratio"].map { percent($0) } ?? "–")
    table.add("… the server holding every action after the last send", secondsText(results["pg.sync.send.catchup"]))
  }

  var postgresSection: String {
    """
    ## Shipping to PostgreSQL

    `bench-postgres` (run by `bench` when it was built beside it) starts a private PostgreSQL 15
    cluster on loopback, as the tests do, on this same machine: the server's backend takes its CPU
    from the cores the shipper and the app run on. `ship` stores a finished log into an empty,
    migrated database; the send rows alternate which goes first in each round. CPU per entry is
    read from `/proc` (the server's processes) and `getrusage` (the shipper). docs/postgres.md,
    *Performance*, has what each change bought.

    The shared-stream rows (docs/sync.md) run `SharedStore`s of one process against the same
    cluster, each device with its own `PostgresClient` and `PostgresStreamServer`, every round in
    new directories and a new stream: propagation is the time from device A's `send` to device B's
    `subscribe` observer on the main actor, both syncing continuously (p50 and p99 of each round's
    sends, then the median over the rounds); the devices pushing together send from one thread
    each, as fast as `send` returns, until the server's head holds every action; the rebase is one
    `sync(with:)` of a device holding pending actions sent offline, over entries another device
    pushed, served from memory (fetched from PostgreSQL once) and from PostgreSQL; the send rows
    send from one thread and alternate their order in each round. tools/bench/HISTORY.md,
    *Shared streams*, has how the figures were reached.

    \(postgresNote ?? postgresTable.markdown)
    """
  }
}
