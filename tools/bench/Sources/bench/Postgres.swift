import Foundation

/// Shipping to PostgreSQL in a full run: `bench` never builds postgres-nio, so it runs
/// the package's other executable, `bench-postgres`, when it was built beside it, and reads the
/// figures it writes with `--json` (every round's, so that the medians are taken here as for every
/// other row). `bench-postgres` starts and removes its own private cluster; its progress shows on
/// standard error as it runs.
///
/// Keys: `pg.ship@SIZE`, `pg.server@SIZE`, `pg.shipper@SIZE` per batch size, `pg.send.alone`,
/// `pg.send.following`, `pg.catchup`, `pg.entries`, `pg.sends`, `pg.serial@1000` and
/// `pg.serverserial@1000` (batches of 1,000 one at a time).
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
    return table
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

    \(postgresNote ?? postgresTable.markdown)
    """
  }
}
