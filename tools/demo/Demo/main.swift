// The Chronicle demo: an audit ledger that sends, navigates, rejects, crashes, recovers,
// travels in time, undoes, and shows its log.
//
//   swift run --traits LogTool chronicle-demo                 the tour, in a temporary directory removed at the end
//   swift run --traits LogTool chronicle-demo --keep          the same, keeping the temporary directory
//   swift run --traits LogTool chronicle-demo --dir PATH      the tour with its log in PATH (kept)
//   chronicle-demo --child PATH              (internal) the process the tour kills
import ArgumentParser
import Chronicle
import ChronicleNavigation
import DemoLedger
import Foundation
import LogToolKit

func heading(_ text: String) { print("\n== \(text)") }

/// `1,234,567`: the one number format of the demo's own lines.
func grouped(_ value: some BinaryInteger) -> String {
  let digits = String(value.magnitude)
  var out = value < 0 ? "-" : ""
  for (index, digit) in digits.enumerated() {
    if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
    out.append(digit)
  }
  return out
}

/// `account jenny (stack: accounts › account jenny)`
func describe(_ navigation: Navigation<Ledger.Screen>) -> String {
  func name(_ screen: Ledger.Screen) -> String {
    switch screen {
    case .accounts: "accounts"
    case .account(let account): "account \(account)"
    case .transfer(let account): "transfer from \(account)"
    }
  }
  guard let visible = navigation.visibleRoute else { return "the home screen" }
  return "\(name(visible)) (stack: \(navigation.stack.map(name).joined(separator: " › ")))"
}

func openLedger(_ directory: URL) throws -> Store<Ledger.State, Ledger.Action> {
  try Store(
    initialState: Ledger.State(), reducer: Ledger(), log: .directory(directory),
    options: StoreOptions(durability: .normal, snapshotEvery: 500, appID: "chronicle-demo"),
    validators: Ledger.validators)
}

/// The child: sends transfers between two accounts as fast as it can and
/// prints every acknowledged sequence number, until it is killed.
func runChild(_ directory: URL) throws -> Never {
  let store = try openLedger(directory)
  var forth = true
  while true {
    let seq = try store.send(
      .transfer(from: forth ? "jenny" : "donald", to: forth ? "donald" : "jenny", cents: 1),
      metadata: ["user": "batch-job"])
    FileHandle.standardOutput.write(Data("\(seq)\n".utf8))
    forth.toggle()
  }
}

/// `ledger-tool`'s commands, run in this process for the tour.
struct DemoTool: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ledger-tool", subcommands: LogTool.standardSubcommands + LogTool.appSubcommands(LedgerApp.self))
}

/// The tour, step by step.
func tour(_ directory: URL, isTemporary: Bool) throws {
  print("Chronicle demo — log at \(directory.path)\(isTemporary ? " (temporary: removed at the end unless --keep)" : "")")

  // MARK: 1. Sending
  heading("1. Sending actions: each one is committed to the log before send returns")
  var store = try openLedger(directory)
  try store.send(.open(account: "jenny"), metadata: ["user": "teller-1"])
  try store.send(.open(account: "donald"), metadata: ["user": "teller-1"])
  try store.send(.deposit(account: "jenny", cents: 10_000), metadata: ["user": "teller-1", "reason": "opening deposit"])
  try store.send(.deposit(account: "donald", cents: 2_500), metadata: ["user": "teller-2"])
  let transferSeq = try store.send(.transfer(from: "jenny", to: "donald", cents: 1_500), metadata: ["user": "jenny"])
  print("transfer committed as entry \(grouped(transferSeq)); balances: \(store.state.summary)")

  heading("1b. Navigation is state too: each screen the teller opens is an entry")
  try store.send(.navigation(.push(.accounts)), metadata: ["user": "teller-1"])
  try store.send(.navigation(.push(.account("jenny"))), metadata: ["user": "teller-1"])
  try store.send(.navigation(.present(.transfer(from: "jenny"))), metadata: ["user": "teller-1"])
  try store.send(.navigation(.dismiss), metadata: ["user": "teller-1"])
  try store.send(.navigation(.push(.account("donald"))), metadata: ["user": "teller-1"])
  print("the teller is on \(describe(store.state.navigation)) (the transfer sheet was dismissed)")

  // MARK: 2. Rejection
  heading("2. A validator rejects an overdraft: nothing is logged, nothing changes")
  do {
    try store.send(.transfer(from: "donald", to: "jenny", cents: 1_000_000), metadata: ["user": "donald"])
  } catch ChronicleError.rejected(let reason) {
    print("rejected: \(reason); the log still ends at entry \(grouped(store.lastSeq)); balances: \(store.state.summary)")
  }
  do {
    try store.send(.navigation(.push(.account("nobody"))), metadata: ["user": "teller-1"])
  } catch ChronicleError.rejected(let reason) {
    print("a screen can be refused too: \(reason); the teller is still on \(describe(store.state.navigation))")
  }
  let totalBefore = store.state.total
  try store.close()

  // MARK: 3. Crash and recovery
  heading("3. A crash: another process sends transfers and is killed with SIGKILL mid-stream")
  let child = Process()
  child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
  child.arguments = ["--child", directory.path]
  let pipe = Pipe()
  child.standardOutput = pipe
  try child.run()
  var acknowledged: UInt64 = 0
  var buffer = Data()
  let deadline = Date().addingTimeInterval(0.3)
  while Date() < deadline {
    let chunk = pipe.fileHandleForReading.availableData
    if chunk.isEmpty { break }
    buffer.append(chunk)
  }
  kill(child.processIdentifier, SIGKILL)
  child.waitUntilExit()
  buffer.append(pipe.fileHandleForReading.readDataToEndOfFile())
  for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
    if let seq = UInt64(line) { acknowledged = max(acknowledged, seq) }
  }
  print("child killed (signal \(child.terminationStatus)); the last entry it acknowledged was \(grouped(acknowledged))")

  store = try openLedger(directory)
  let recovery = store.recovery
  print(
    """
    reopened: snapshot \(recovery.snapshotSeq.map(grouped) ?? "none") + \(grouped(recovery.entriesReplayed)) entries \
    replayed in \(milliseconds(recovery.duration))
    last entry \(grouped(recovery.lastSeq)) ≥ acknowledged \(grouped(acknowledged)): \(recovery.lastSeq >= acknowledged ? "nothing lost" : "LOST ENTRIES")
    money conserved: \(store.state.total == totalBefore ? "yes" : "NO") (\(grouped(store.state.total)) cents), \
    transfers so far: \(grouped(store.state.transfers))
    the teller is back on \(describe(store.state.navigation))
    """)

  // MARK: 4. Time travel and undo
  heading("4. Time travel: any past state, without changing anything")
  print("after entry \(grouped(transferSeq)): \(try store.state(at: transferSeq).summary)")
  print("after entry 3:  \(try store.state(at: 3).summary)")

  heading("5. Undo and redo are entries too: they survive restarts and stay in the audit trail")
  try store.send(.transfer(from: "jenny", to: "donald", cents: 4_242), metadata: ["user": "jenny", "reason": "typo"])
  print("after a mistaken transfer: \(store.state.summary)")
  try store.undo(metadata: ["user": "jenny"])
  print("after undo:                \(store.state.summary)  (canRedo: \(store.canRedo))")
  try store.close()
  store = try openLedger(directory)
  print("after a restart, canRedo is still \(store.canRedo)")
  try store.redo(metadata: ["user": "jenny"])
  print("after redo:                \(store.state.summary)")
  try store.undo(metadata: ["user": "jenny"])
  let restoreSeq = try store.restore(to: transferSeq, metadata: ["user": "auditor", "reason": "back to the first transfer"])
  print("restore to entry \(grouped(transferSeq)) appended as entry \(grouped(restoreSeq)): \(store.state.summary)")

  heading("6. The audit trail (last 6 entries)")
  let history = try store.history
  for entry in history.suffix(6) {
    let what = entry.action.map { "\($0)" } ?? "→ state after entry \(grouped(entry.target ?? 0))"
    print("  \(grouped(entry.seq))  \(entry.kind)  \(entry.typeName)  \(what)  \(entry.metadata)")
  }
  try store.close()

  heading("7. The log verifies: gapless sequence, SHA-256 chain, snapshots")
  let log = try ActionLog(directory: directory, access: .readOnly)
  let report = try log.verify()
  print(
    "\(grouped(report.entriesChecked)) entries and \(grouped(report.snapshotsChecked)) snapshots checked: \(report.isValid ? "valid" : "PROBLEMS: \(report.problems)")"
  )
  print("chain head: \(report.head.map { String(format: "%02x", $0) }.joined())")
  try log.close()

  heading("8. The log tool, with the ledger's reducer built in (ledger-tool; logtool has the generic commands)")
  for arguments in [
    ["info", directory.path], ["list", directory.path, "--from", "1", "--limit", "6"],
    ["list", directory.path, "--type", "navigation.push", "--type", "navigation.present", "--type", "navigation.dismiss"],
    ["verify", directory.path],
    ["state-at", directory.path, "3"], ["diff", directory.path, "3", "\(transferSeq)"], ["replay", directory.path],
  ] {
    print("\n$ ledger-tool \(arguments.joined(separator: " "))")
    fflush(nil)  // the generic commands write to the file descriptor directly
    var command = try DemoTool.parseAsRoot(arguments)
    try command.run()
    fflush(nil)
  }
  if isTemporary {
    print("\nThe log at \(directory.path) is removed now: run with --keep, or --dir PATH, to inspect it afterwards.")
  } else {
    print(
      "\nInspect it yourself: swift run --traits LogTool logtool info \(directory.path)   "
        + "(or with the ledger's reducer: swift run --traits Inspector ledger-tool state-at \(directory.path) 3)")
  }
}

/// `7.4 ms`.
func milliseconds(_ duration: Duration) -> String {
  let (seconds, attoseconds) = duration.components
  return String(format: "%.1f ms", Double(seconds) * 1_000 + Double(attoseconds) / 1e15)
}

// MARK: - Command line

/// The demo's command line.
struct DemoCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "chronicle-demo",
    abstract: "A tour of Chronicle: an audit ledger that sends, rejects, crashes, recovers, travels in time and undoes.",
    discussion: """
      Without --dir the log goes to a new temporary directory, removed at the end unless --keep is given.
      Exit codes: 0 fine, 1 something failed, 2 bad usage or a log it cannot use (locked by another writer, …).
      """)

  @Option(name: .long, help: ArgumentHelp("Keep the log in this directory (created if missing; never removed).", valueName: "path"))
  var dir: String?

  @Flag(help: "Keep the temporary log directory at the end.")
  var keep = false

  @Option(help: .private)
  var child: String?

  func run() throws {
    if let child { try runChild(URL(fileURLWithPath: child)) }
    let temporary = dir == nil
    let directory =
      dir.map { URL(fileURLWithPath: $0) }
      ?? FileManager.default.temporaryDirectory.appendingPathComponent("chronicle-demo-\(UUID().uuidString)")
    defer {
      if temporary, !keep { try? FileManager.default.removeItem(at: directory) }
    }
    try tour(directory, isTemporary: temporary && !keep)
  }
}

/// The exit status and one-line message for an error that ended the demo.
func failure(_ error: any Error) -> (code: Int32, message: String) {
  switch error {
  case ChronicleError.logLocked(let path):
    (LogTool.exitBadInput, "the log at \(path) is locked by another writer; stop it, or pass --dir with another path")
  case ChronicleError.log(let error): LogTool.exitStatus(for: error)
  case let error as ChronicleError: (LogTool.exitLogProblem, error.description)
  default: LogTool.exitStatus(for: error)
  }
}

var command: DemoCommand
do {
  command = try DemoCommand.parse()
} catch {
  // `--help` prints the help and exits with 0; a usage error exits with 2.
  if DemoCommand.exitCode(for: error) == .success { DemoCommand.exit(withError: error) }
  FileHandle.standardError.write(Data("\(DemoCommand.fullMessage(for: error))\n".utf8))
  exit(LogTool.exitBadInput)
}
do {
  try command.run()
} catch {
  let (status, message) = failure(error)
  fflush(nil)
  FileHandle.standardError.write(Data("chronicle-demo: \(message)\n".utf8))
  exit(status)
}
