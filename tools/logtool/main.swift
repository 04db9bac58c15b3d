// The `logtool` executable: every generic command of LogToolKit, and `serve` (ChronicleInspector).
import ArgumentParser
import ChronicleInspector
import LogToolKit

/// `logtool`: LogToolKit's commands plus the web inspector.
struct LogToolWithServe: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: LogToolCommand.configuration.commandName,
    abstract: LogToolCommand.configuration.abstract,
    discussion: LogToolCommand.configuration.discussion,
    version: LogToolCommand.configuration.version,
    subcommands: LogTool.standardSubcommands + [LogTool.Serve.self])

  func run() throws { try LogToolCommand().run() }
}

LogTool.main(LogToolWithServe.self)
