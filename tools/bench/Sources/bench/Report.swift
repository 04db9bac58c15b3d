import Foundation

/// The tables, printed and written to docs/performance.md.
struct Report {
  let config: Config
  let results: Results
  let machine: Machine
  let targets: [Target]
  let profiles: [ProfileReport]
  /// Why profiles are absent, when they are.
  let profileNote: String?
  /// Why shipping to PostgreSQL was not measured, when it was not.
  var postgresNote: String? = nil

  private var largest: Int { config.lengths.last ?? 0 }

  // MARK: - Tables

  /// Appends: W1, W2, W3, W9.
  var appendTable: Table {
    var table = Table(
      "workload", "Chronicle", "raw LMDB (limit)", "GRDB (SQLite)", "JSON file", "Chronicle ÷ raw",
      "Chronicle ÷ GRDB", "Chronicle ÷ JSON file")
    func row(_ name: String, _ chronicle: String, raw: String?, grdb: String?, json: String?) {
      let mine = results[chronicle]
      let rawValue = raw.flatMap { results[$0] }
      let grdbValue = grdb.flatMap { results[$0] }
      let jsonValue = json.flatMap { results[$0] }
      table.add(
        name, rate(mine), rate(rawValue), rate(grdbValue), rate(jsonValue), ratio(mine, rawValue),
        ratio(mine, grdbValue), ratio(mine, jsonValue))
    }
    let cbor = "`CBORCodable` actions"
    let batch = "`send(contentsOf:)` ×\(grouped(Double(config.batchSize)))"
    row(
      "W1 `send`, `.normal` (ledger, \(config.accounts) accounts, \(cbor))", "w1.chronicle", raw: "w1.raw",
      grdb: "w1.grdb", json: "w1.json")
    row(
      "W1 `send`, `.normal` (ledger, \(config.accounts) accounts, Codable actions)", "w1.chronicle.codable",
      raw: "w1.raw", grdb: "w1.grdb", json: "w1.json")
    row("W1 `send`, `.normal` (counter)", "w1.counter", raw: "w1.raw", grdb: nil, json: nil)
    row("W2 `send`, `.full` (ledger, \(cbor))", "w2.chronicle", raw: "w2.raw", grdb: "w2.grdb", json: "w2.json")
    row(
      "W3 \(batch), `.normal` (ledger, \(cbor), 0 → \(lengthText(largest)))", "w3.chronicle", raw: "w3.raw",
      grdb: "w3.grdb", json: nil)
    row(
      "W3 \(batch), `.normal` (ledger, Codable actions, \(grouped(Double(config.codableBatches))) batches "
        + "into an empty log)", "w3.chronicle.codable", raw: "w3.raw", grdb: "w3.grdb", json: nil)
    row(
      "W3 \(batch), `.normal` (ledger, actions and state conformed by the macro `@CBORCodable`, "
        + "\(grouped(Double(config.codableBatches))) batches into an empty log)", "w3.chronicle.macro", raw: "w3.raw",
      grdb: "w3.grdb", json: nil)
    row(
      "W3 \(batch), `.full` (ledger, \(cbor))", "w3full.chronicle", raw: "w3full.raw", grdb: "w3full.grdb",
      json: nil)
    for size in config.stateSizes {
      row(
        "W9 `send`, `.normal`, \(grouped(Double(size)))-account state (ledger, \(cbor))", "w9.chronicle@\(size)",
        raw: nil, grdb: nil, json: "w9.json@\(size)")
    }
    return table
  }

  /// Replay (W4) at the largest length.
  var replayTable: Table {
    var table = Table(
      "W4 replay of \(grouped(Double(largest))) entries", "time", "entries/s", "Chronicle CBOR with `CBORCodable` ÷ this")
    let cbor = results["w4.rate.chronicle", at: largest]
    let rows: [(String, String)] = [
      ("Chronicle, CBOR codec, `CBORCodable` actions (reopen, no usable snapshot)", "chronicle"),
      ("Chronicle, CBOR codec, Codable actions (reopen, no usable snapshot)", "chronicle.codable"),
      ("Chronicle, CBOR codec, actions conformed by the macro `@CBORCodable` (reopen, no usable snapshot)", "chronicle.macro"),
      ("Chronicle, JSON codec (reopen, no usable snapshot)", "json"),
      ("raw LMDB cursor scan (limit)", "raw"),
      ("GRDB `SELECT` + JSON decode + fold", "grdb"),
    ]
    for (name, system) in rows {
      let value = results["w4.rate.\(system)", at: largest]
      table.add(
        name, secondsText(results["w4.seconds.\(system)", at: largest]), rate(value),
        system == "chronicle" ? "1.00×" : ratio(cbor, value))
    }
    return table
  }

  /// Reopen, time travel and verification at the largest length.
  var readTable: Table {
    var table = Table("figure", "value")
    for length in config.lengths.dropLast() {
      table.add("W5 reopen with snapshots, \(grouped(Double(length))) entries", milliseconds(results["w5.ms", at: length]))
    }
    table.add(
      "W5 reopen with snapshots, \(grouped(Double(largest))) entries", milliseconds(results["w5.ms", at: largest]))
    table.add(
      "W5 … compared with a full replay of \(grouped(Double(largest))) (W4)",
      milliseconds(results["w4.seconds.chronicle", at: largest].map { $0 * 1_000 }))
    table.add(
      "W6 `state(at:)` median, \(grouped(Double(largest))) entries", milliseconds(results["w6.median", at: largest]))
    table.add(
      "W6 `state(at:)` p99 (\(grouped(results["w6.queries", at: largest] ?? 0)) random queries)",
      milliseconds(results["w6.p99", at: largest]))
    table.add("W7 `ActionLog.verify()`, \(grouped(Double(largest))) entries", rate(results["w7.rate", at: largest]))
    return table
  }

  /// The Merkle tree: appends with and without it, proofs, verification and signing.
  var treeTable: Table {
    var table = Table("figure", "with the tree", "without the tree", "with ÷ without")
    let batch = "`send(contentsOf:)` ×\(grouped(Double(config.batchSize)))"
    for (name, key) in [
      ("`send`, `.normal` (ledger, `CBORCodable` actions, \(grouped(Double(config.singleSends))) into a new log)", "tree.w1"),
      ("\(batch), `.normal` (ledger, `CBORCodable` actions, \(grouped(Double(TreeWorkloads(config: config).batches))) batches into a new log)", "tree.w3"),
    ] {
      table.add(name, rate(results["\(key).on"]), rate(results["\(key).off"]), results["\(key).ratio"].map(times) ?? "–")
    }
    let length = grouped(Double(TreeWorkloads.logLength))
    table.add("inclusion proof, median of random entries, \(length) entries", milliseconds(results["tree.inclusion.ms"]), "", "")
    table.add("consistency proof to the whole tree, median of random sizes, \(length) entries", milliseconds(results["tree.consistency.ms"]), "", "")
    table.add("`verify(checkpoint:verifier:)`, \(length) entries", secondsText(results["tree.verify.s"]), "", "")
    table.add("`signCheckpoint(with:)` (sign and store)", rate(results["tree.sign.rate"]), "", "")
    return table
  }

  /// Every growth figure at every length.
  var growthTable: Table {
    var table = Table(["figure"] + config.lengths.map { "\(lengthText($0)) entries" })
    func row(_ name: String, _ key: String, _ format: (Double?) -> String) {
      table.rows.append([name] + config.lengths.map { format(results[key, at: $0]) })
    }
    row("W1 Chronicle `send`, `.normal`, appended at this length (`CBORCodable` actions)", "w1.chronicle", rate)
    row("W1 raw LMDB put", "w1.raw", rate)
    row("W1 GRDB insert", "w1.grdb", rate)
    row("W3 Chronicle batches (the batches that reached this length, `CBORCodable` actions)", "w3.chronicle", rate)
    row("W3 raw LMDB batches", "w3.raw", rate)
    row("W3 GRDB batches", "w3.grdb", rate)
    row("W4 Chronicle replay, CBOR, `CBORCodable` actions", "w4.rate.chronicle", rate)
    row("W4 Chronicle replay, CBOR, Codable actions", "w4.rate.chronicle.codable", rate)
    row("W4 Chronicle replay, CBOR, actions conformed by `@CBORCodable`", "w4.rate.chronicle.macro", rate)
    row("W4 Chronicle replay, JSON", "w4.rate.json", rate)
    row("W4 raw LMDB scan", "w4.rate.raw", rate)
    row("W4 GRDB scan + decode", "w4.rate.grdb", rate)
    row("W5 reopen with snapshots", "w5.ms", milliseconds)
    row("W6 `state(at:)` median", "w6.median", milliseconds)
    row("W6 `state(at:)` p99", "w6.p99", milliseconds)
    row("W7 verify", "w7.rate", rate)
    let systems = [
      ("Chronicle CBOR (`CBORCodable` actions)", "chronicle"), ("Chronicle CBOR (Codable actions)", "chronicle.codable"),
      ("Chronicle JSON", "json"), ("raw LMDB", "raw"), ("GRDB", "grdb"),
    ]
    for (name, system) in systems {
      row("W8 \(name) replay: peak anonymous memory", "w8.anon.\(system)", mebibytes)
      row("W8 \(name) replay: peak RSS (with mapped pages)", "w8.rss.\(system)", mebibytes)
    }
    row("bytes on disk per entry, Chronicle CBOR", "bytes.chronicle", bytesText)
    row("bytes on disk per entry, Chronicle JSON (entries only, no snapshots)", "bytes.json", bytesText)
    row("bytes on disk per entry, raw LMDB", "bytes.raw", bytesText)
    row("bytes on disk per entry, GRDB", "bytes.grdb", bytesText)
    return table
  }

  var targetTable: Table {
    var table = Table("target", "measured", "result")
    for target in targets { table.add(target.name, target.measured, "**\(target.verdict)**") }
    return table
  }

  // MARK: - Text

  /// What the terminal shows.
  var console: String {
    """
    Appends (actions/s, medians of \(config.runs) run\(config.runs == 1 ? "" : "s"))
    \(appendTable.markdown)

    \(replayTable.markdown)

    \(readTable.markdown)

    The Merkle tree
    \(treeTable.markdown)

    Concurrent senders and async send
    \(concurrencyTable.markdown)

    Encryption at rest
    \(encryptionTable.markdown)

    Shipping to PostgreSQL
    \(postgresNote ?? postgresTable.markdown)

    Growth with log length
    \(growthTable.markdown)

    Performance targets
    \(targetTable.markdown)
    """
  }

  /// docs/performance.md.
  var markdown: String {
    let passed = targets.filter { $0.passed == true }.count
    let missed = targets.filter { $0.passed == false }.count
    var text = """
      # Performance

      Chronicle measured side by side with the limit (raw LMDB through Chronicle's
      own `ChronicleLMDB` module), the peer a Swift developer would pick for an event table
      (SQLite through GRDB), and the seeds' persistence model (the whole state
      encoded to JSON and written to a file after every action), in one run of
      `tools/bench`. Every figure is the median of \(config.runs) run\(config.runs == 1 ? "" : "s")\(config.quick ? " of a `--quick` smoke run (small sizes: not a measurement to quote)" : "").
      This file is written by the benchmark; edit the benchmark, not this file.
      How the figures were reached, round by round, is in tools/bench/HISTORY.md.

      ## Machine

      | | |
      |---|---|
      | processors (`nproc`) | \(machine.processors) |
      | CPU | \(machine.cpu) |
      | memory | \(machine.memory) |
      | Swift | \(machine.swift) |
      | kernel | \(machine.kernel) |
      | file system of the logs | \(machine.fileSystem) |
      | date | \(machine.date) |
      | load average at start → end | \(machine.loadAtStart) → \(machine.loadAtEnd) |

      The machine is shared: other work shows in the load average and makes
      single runs noisy, which is why medians are reported.

      ## Performance targets

      \(passed) of \(targets.count) targets pass, \(missed) miss.

      \(targetTable.markdown)

      ## Appends

      Actions per second (higher is better). Each system starts from an empty
      log in a fresh directory on the same disk; ratios above 1 favour Chronicle.

      \(appendTable.markdown)

      ## Replay

      Reopening a store whose snapshots cannot be used (another
      `stateSchemaVersion`) folds every entry through the reducer; each replay
      runs in a child process of its own.

      \(replayTable.markdown)

      ## Reopen, time travel, verification

      \(readTable.markdown)

      ## The Merkle tree

      The verifiable log's costs. The with/without rows run the same actions
      into new logs alternately, \(TreeWorkloads(config: config).rounds) times each per run, with the tree
      maintained and without it (a switch only the benchmark and the tests use);
      "with ÷ without" is the median of each round's own ratio, so that load
      from elsewhere spoils a round's pair rather than one side; proofs, verification and signing run over one log of \(grouped(Double(TreeWorkloads.logLength))) ledger
      entries built by batches of 1,000 in every run, `--quick` included.

      \(treeTable.markdown)

      ## Concurrent senders and the async send

      \(ConcurrentWorkloads.senders) threads (or tasks) send ledger actions into one new log at once, against
      the same actions sent by one thread. With `.full`, concurrent sends share one LMDB transaction
      and one sync (group commit); each returns once its entry is durable. The GRDB row writes the same
      actions from \(ConcurrentWorkloads.senders) threads into one event table in WAL mode with
      synchronous=FULL, one transaction per action (GRDB serializes its writes; SQLite has no group
      commit). The sync/async pair sends the same actions from one thread, then from one task with
      `try await store.send(_:)`, alternating which goes first.

      \(concurrencyTable.markdown)

      ## Encryption at rest

      The same ledger actions into new logs encrypted (a `KeyRing` of one AES-256 key: every entry
      sealed with AES-256-GCM) and in the clear, alternately, \(EncryptionWorkloads(config: config).rounds) times each per run;
      replay opens a store of the encrypted or clear log with its snapshots removed. "Encrypted ÷
      clear" is the median of each round's own ratio.

      \(encryptionTable.markdown)

      \(postgresSection)

      ## Growth with log length

      The logs grow by batches of 1,000 (W3); at each length they are closed,
      measured (W4–W8, bytes on disk), then \(grouped(Double(config.growthSends))) single sends are
      appended (W1 at that length) before growing on. The JSON-codec log, which
      only W4 replays, holds the entries a store with `codec: .json` writes,
      appended with `ActionLog.append(contentsOf:)` to save building time. Peak anonymous memory is
      sampled from `RssAnon` every 2 ms in the replaying child; peak RSS is its
      `VmHWM`, which also counts the log's pages mapped by LMDB (page cache, not
      allocations).

      \(growthTable.markdown)

      """
    text += profileSection
    text += method
    text += howToRun
    return text
  }

  private var profileSection: String {
    var text = """

      ## Profiles of the missed targets

      """
    if let profileNote {
      text += "\n\(profileNote)\n"
      return text
    }
    text += """

      Instruction counts from `valgrind --tool=callgrind` on a release build,
      collected only inside the measured section (`--toggle-collect`), at small
      sizes. *Self* is the share of instructions executed in the function's own
      code; *inclusive* adds everything it calls. Instructions are not time:
      waiting for the disk (fsync) does not show.

      """
    let missedBy = Dictionary(grouping: targets.filter { $0.passed == false && $0.profile != nil }) { $0.profile! }
    for report in profiles {
      let names = (missedBy[report.kind] ?? []).map { "- \($0.name)" }.joined(separator: "\n")
      var selfTable = Table("self", "function")
      for line in report.exclusive { selfTable.add(String(format: "%.1f %%", line.share), escape(line.function)) }
      var inclusiveTable = Table("inclusive", "function")
      for line in report.inclusive { inclusiveTable.add(String(format: "%.1f %%", line.share), escape(line.function)) }
      var libraryTable = Table("self", "where")
      for line in report.libraries where line.share >= 0.1 {
        libraryTable.add(String(format: "%.1f %%", line.share), libraryName(line.function))
      }
      text += """

        ### \(report.kind.title)

        Explains:
        \(names)

        Profiled: \(report.description); \(grouped(Double(report.totalInstructions))) instructions.

        By library:

        \(libraryTable.markdown)

        Top functions by self cost:

        \(selfTable.markdown)

        Top functions by inclusive cost (one line per chain of wrappers with the same cost):

        \(inclusiveTable.markdown)

        """
    }
    if targets.contains(where: { $0.passed == false && $0.profile == nil }) {
      text += """

        The memory target is not a matter of time: its figures are in the growth
        table (W8), peak anonymous memory per length.

        """
    }
    return text
  }

  private var method: String {
    """

    ## What each system does

    - **Chronicle**: `Store` with the `Ledger` reducer (accounts and transfers,
      \(config.accounts) accounts unless said otherwise) and default `StoreOptions` (CBOR,
      a snapshot every 1,000 entries, all kept, undo depth 100, background flush
      every second with `.normal`); no validators. The counter row uses `Counter`.
      The ledger's actions and state conform to `CBORCodable` (hand-written CBOR, the same
      bytes as `Codable`'s; the state is what every snapshot encodes); the rows marked
      *Codable actions* send and replay the same actions, entries and log through
      `Codable`'s synthesized conformances only (actions and state), as an app without a
      `CBORCodable` conformance does (their W3 batches: \(grouped(Double(config.codableBatches))) batches
      into an empty log). The rows marked *conformed by the macro* do the same with the
      `CBORCodable` conformances that `@CBORCodable` (product `ChronicleMacros`) generates for
      the actions and the state: still no conformance written by hand.
    - **raw LMDB**: one named database, big-endian 8-byte keys put with
      `MDB_APPEND`, values of \(config.accounts == 100 ? "the size of a Chronicle ledger entry" : "a Chronicle entry's size") (header, type name,
      CBOR payload, hash), through the same `ChronicleLMDB` module; `MDB_NOSYNC` for the
      `.normal` figures, synced commits for `.full`. No encoding, no hashing, no state.
    - **GRDB**: `DatabaseQueue`, WAL, `synchronous=NORMAL` (or `FULL`), a table
      `events(seq INTEGER PRIMARY KEY, ts, type, payload BLOB)`, the action
      encoded with one reused `JSONEncoder`, a cached `INSERT` statement, one
      write transaction per send (or per batch), the state folded in memory.
      Replay: `SELECT payload … ORDER BY seq`, `JSONDecoder`, fold.
    - **JSON file**: after every action, the whole state encoded with
      `JSONEncoder`, written to a temporary file and renamed over the old one;
      `.full` adds an fsync before the rename. Runs stop after \(secondsText(config.jsonFileBudget)) of
      work when the state is large.

    """
  }

  private var howToRun: String {
    """

    ## How to run

    ```sh
    swift run -c release --package-path tools/bench bench            # full run, a few minutes after the build
    swift run -c release --package-path tools/bench bench --quick    # smoke run: small sizes, one repetition
    swift run -c release --package-path tools/bench bench --output perf.md --runs 5
    swift run -c release --package-path tools/bench bench tree --quick  # the Merkle tree's rows alone, printed
    swift run -c release --package-path tools/bench bench encryption --quick  # encryption at rest's rows alone, printed
    swift run -c release --package-path tools/bench bench batches  # W3 with the three conformances, alternating, printed
    swift build -c release --package-path tools/bench --product bench-postgres  # then full runs ship to PostgreSQL too
    ```

    The benchmark is its own package (GRDB never reaches Chronicle's users) and
    builds in `tools/bench/.build`. It writes this file (or `--output PATH`),
    puts its logs in the temporary directory (`--scratch DIR` to choose) and
    deletes them between runs. With valgrind installed, a full run profiles
    every missed target under callgrind (`--no-profile` to skip,
    `--profile` to force it in a `--quick` run).

    """
  }

  /// What a shared object holds, for the by-library table.
  private func libraryName(_ library: String) -> String {
    switch library {
    case "bench": "the executable: Chronicle, LMDB wrapper, CBOR, swift-crypto (BoringSSL), GRDB"
    case "libswiftCore.so": "`libswiftCore.so`: Swift runtime (metadata, casts, key paths) and standard library"
    case "": "unknown"
    default: "`\(library)`"
    }
  }

  private func escape(_ text: String) -> String {
    "`" + text.replacingOccurrences(of: "`", with: "'").replacingOccurrences(of: "|", with: "\\|") + "`"
  }
}
