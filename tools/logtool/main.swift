// The `logtool` executable: every generic command of LogToolKit, and `serve` (ChronicleInspector).
import ArgumentParser
import Foundation
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

  /// Without a subcommand: the help (with `serve`) on standard error, and exit 2 (bad usage).
  func run() throws {
    FileHandle.standardError.write(Data((Self.helpMessage() + "\n").utf8))
    throw ExitCode(LogTool.exitBadInput)
  }
}

LogTool.main(LogToolWithServe.self)
