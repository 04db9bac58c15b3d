import Foundation

// `bench`: Chronicle against the limit (raw LMDB) and the peers (GRDB, a JSON
// file per action). See Config.usage, or docs/performance.md's "How to run".

let arguments = Array(CommandLine.arguments.dropFirst())

do {
  if arguments.first == "--child" {
    try Child.run(Array(arguments.dropFirst()))
  }
  if arguments.first == "jumps" {
    try Jumps.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == "encryption" {
    try EncryptionWorkloads.main(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == "send" {
    // W1 against raw LMDB and 8 `.normal` senders against one, in alternating rounds, printed.
    try SendRounds.main(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == "batches" {
    // W3 with the three conformances (hand-written, `@CBORCodable`, plain Codable), alternating, printed.
    try BatchRounds.main(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == "tree", arguments.dropFirst().first == "profile" {
    try TreeWorkloads.profile(Array(arguments.dropFirst(2)))
    exit(0)
  }
  if arguments.first == "tree" {
    // The tree workloads alone: their table and targets on the terminal, no file written.
    let config = try Config.parse(Array(arguments.dropFirst()))
    var results = Results()
    for run in 1...config.runs {
      try withBenchRoot(config.scratchRoot, "tree-\(run)") { root in
        try TreeWorkloads(config: config).run(root: root, into: &results)
      }
    }
    let report = Report(
      config: config, results: results, machine: Machine(scratch: config.scratchRoot), targets: results.treeTargets(),
      profiles: [], profileNote: nil)
    print(report.treeTable.markdown)
    print(report.targetTable.markdown)
    exit(0)
  }
  if arguments.contains("-h") || arguments.contains("--help") {
    print(Config.usage)
    exit(0)
  }
  let config = try Config.parse(arguments)
  var machine = Machine(scratch: config.scratchRoot)
  let started = ContinuousClock.now
  var runner = try Runner(config: config)
  try runner.run()
  var results = runner.results
  let postgresNote = try PostgresWorkloads(config: config).run(into: &results)
  machine.loadAtEnd = Machine.load()
  let targets = results.targets(config: config)

  var profiles: [ProfileReport] = []
  var profileNote: String?
  let missedKinds = ProfileKind.allCases.filter { kind in targets.contains { $0.passed == false && $0.profile == kind } }
  let wantsProfiles = config.profile ?? !config.quick
  if missedKinds.isEmpty {
    profileNote = "Every target that a profile could explain passes."
  } else if !wantsProfiles {
    profileNote = "Not profiled in this run (`--quick` without `--profile`, or `--no-profile`)."
  } else if !Profiler.isAvailable {
    profileNote = "Not profiled: valgrind (with callgrind_annotate) is not installed."
  } else {
    log("profiling \(missedKinds.count) workload(s) behind missed targets")
    for kind in missedKinds {
      profiles.append(try Profiler.profile(kind, config: config, scratch: config.scratchRoot))
    }
  }

  let report = Report(
    config: config, results: results, machine: machine, targets: targets, profiles: profiles,
    profileNote: profileNote, postgresNote: postgresNote)
  print(report.console)
  try FileManager.default.createDirectory(
    at: config.output.deletingLastPathComponent(), withIntermediateDirectories: true)
  try report.markdown.write(to: config.output, atomically: true, encoding: .utf8)
  log("wrote \(config.output.path) in \(secondsText((ContinuousClock.now - started).seconds))")
} catch {
  FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
  exit(1)
}
