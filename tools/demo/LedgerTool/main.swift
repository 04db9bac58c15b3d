// ledger-tool: logtool for the demo ledger. Every generic command, plus the
// ones that need the app's reducer: state-at, replay, diff and serve (the web inspector, with states).
import ArgumentParser
import ChronicleInspector
import DemoLedger
import LogToolKit

/// The demo's own log tool.
struct LedgerTool: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ledger-tool",
    abstract: "Inspect the demo ledger's log; state-at, replay and diff know its reducer.",
    subcommands: LogTool.standardSubcommands + LogTool.appSubcommands(LedgerApp.self)
      + [LogTool.AppServe<LedgerApp>.self])
}

await LogTool.main(LedgerTool.self)
