import Foundation

/// What one invocation measures, and how much of it.
struct Config: Sendable {
  /// `--quick`: small sizes and one repetition, for a smoke run.
  var quick = false
  /// Repetitions of every measurement; the report shows medians.
  var runs = 3
  /// Log lengths the growth workloads build up to, in order.
  var lengths = [10_000, 100_000, 1_000_000]
  /// Accounts in the ledger of W1–W8.
  var accounts = 100
  /// Actions per `send(contentsOf:)` batch (W3) and per build step.
  var batchSize = 1_000
  /// W1: single sends into a fresh log.
  var singleSends = 20_000
  /// W1 at each log length: single sends appended to the grown log.
  var growthSends = 2_000
  /// W2: synced single sends.
  var syncedSends = 300
  /// W3 with `.full`: synced batches into a fresh log.
  var syncedBatches = 20
  /// W3 with plain-`Codable` actions: `.normal` batches into a fresh log.
  var codableBatches = 100
  /// W9: the state sizes (accounts) and the sends at each.
  var stateSizes = [10, 1_000, 10_000]
  var stateSends = 2_000
  /// Longest time spent on one JSON-file measurement (the model is slow at large states).
  var jsonFileBudget = 3.0
  /// W5: reopens per length.
  var reopens = 5
  /// W6: random `state(at:)` queries per length, and the time allowed for them.
  var stateAtQueries = 200
  var stateAtBudget = 10.0
  /// Run callgrind profiles of missed targets: `nil` decides by itself (on for full runs with valgrind).
  var profile: Bool?
  /// Run `bench-postgres` (shipping to PostgreSQL) when it was built beside `bench`.
  var postgres = true
  /// Where the markdown goes.
  var output: URL
  /// Where the logs are written (a temporary directory by default).
  var scratchRoot: URL

  static let usage = """
    usage: bench [--quick] [--runs N] [--output PATH] [--scratch DIR] [--profile | --no-profile]
                 [--no-postgres]

    Measures Chronicle against raw LMDB, GRDB and a JSON file per action, prints
    a table of medians and ratios, and writes it with the performance targets to
    docs/performance.md (or PATH).

      --quick        small sizes, one repetition: a smoke run
      --runs N       repetitions (default 3; 1 with --quick)
      --output PATH  where to write the markdown (default: docs/performance.md in the repository)
      --scratch DIR  where to put the logs (default: the temporary directory)
      --profile      profile missed targets with valgrind's callgrind (default in full runs)
      --no-profile   do not profile
      --no-postgres  leave out shipping to PostgreSQL (run by default when `bench-postgres` was
                     built beside `bench`: it starts a private cluster of its own)

    bench tree [--quick] [--runs N]: only the Merkle tree's workloads (appends with
    and without the tree, proofs, checkpoint verification and signing over a
    1,000,000-entry log), printed, no file written.

    bench tree profile on|off [COUNT]: COUNT actions (default 200,000) in batches
    into a new log with the tree or without it, once, for a profiler.

    bench encryption [--quick]: only encryption at rest's workloads (send, batched
    appends and replay, encrypted and in the clear), printed, no file written.

    bench batches [--quick] [--rounds N]: W3's batches with the ledger's three
    conformances (hand-written, @CBORCodable, plain Codable) in alternating rounds,
    printed; `bench batches profile hand|macro|codable [COUNT]` for a profiler.

    bench jumps [--sizes N,N,...]: recovery, restore and state(at:) over logs
    full of undo and restore entries, at growing sizes (see `bench jumps --help`).
    """

  /// Removes `--rounds N` from `arguments` and returns N (`fallback` without it): the rounds of the
  /// subcommands that alternate their sides per round (`bench send`, `bench batches`).
  static func takeRounds(from arguments: inout [String], fallback: Int = 5, usage: String) throws -> Int {
    guard let index = arguments.firstIndex(of: "--rounds") else { return fallback }
    guard index + 1 < arguments.count, let rounds = Int(arguments[index + 1]), rounds > 0 else {
      throw BenchError("--rounds needs a positive integer\n\n\(usage)")
    }
    arguments.removeSubrange(index...(index + 1))
    return rounds
  }

  /// Parses the command line (without the executable's name).
  static func parse(_ arguments: [String]) throws -> Config {
    var config = Config(output: defaultOutput(), scratchRoot: FileManager.default.temporaryDirectory)
    var runs: Int?
    var index = 0
    func value(_ flag: String) throws -> String {
      index += 1
      guard index < arguments.count else { throw BenchError("\(flag) needs a value\n\n\(usage)") }
      return arguments[index]
    }
    while index < arguments.count {
      let argument = arguments[index]
      switch argument {
      case "--quick": config.quick = true
      case "--runs":
        guard let n = Int(try value(argument)), n > 0 else { throw BenchError("--runs needs a positive integer") }
        runs = n
      case "--output": config.output = URL(fileURLWithPath: try value(argument))
      case "--scratch": config.scratchRoot = URL(fileURLWithPath: try value(argument), isDirectory: true)
      case "--profile": config.profile = true
      case "--no-profile": config.profile = false
      case "--no-postgres": config.postgres = false
      default: throw BenchError("unknown argument \(argument)\n\n\(usage)")
      }
      index += 1
    }
    if config.quick {
      config.runs = 1
      config.lengths = [1_000, 10_000]
      config.singleSends = 2_000
      config.growthSends = 1_000
      config.syncedSends = 50
      config.syncedBatches = 3
      config.codableBatches = 10
      config.stateSends = 1_000
      config.jsonFileBudget = 0.5
      config.reopens = 2
      config.stateAtQueries = 20
      config.stateAtBudget = 1
    }
    if let runs { config.runs = runs }
    return config
  }

  /// `docs/performance.md` at the root of the repository this package lives in.
  static func defaultOutput() -> URL {
    repositoryRoot().appendingPathComponent("docs/performance.md")
  }

  /// The repository root: found from this source file's place in the package
  /// (tools/bench/Sources/bench), else by walking up from the executable or
  /// the working directory to the folder that holds tools/bench/Package.swift.
  static func repositoryRoot() -> URL {
    let fileManager = FileManager.default
    func isRoot(_ url: URL) -> Bool {
      fileManager.fileExists(atPath: url.appendingPathComponent("tools/bench/Package.swift").path)
    }
    var source = URL(fileURLWithPath: #filePath)
    for _ in 0..<5 { source.deleteLastPathComponent() }
    if isRoot(source) { return source }
    let starts = [
      (try? selfExecutable()).map { URL(fileURLWithPath: $0) },
      URL(fileURLWithPath: fileManager.currentDirectoryPath, isDirectory: true),
    ]
    for case var url? in starts {
      while url.path != "/" {
        if isRoot(url) { return url }
        url.deleteLastPathComponent()
      }
    }
    return URL(fileURLWithPath: fileManager.currentDirectoryPath, isDirectory: true)
  }
}
