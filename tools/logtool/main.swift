// The `logtool` executable: every generic command of LogToolKit, and the PostgreSQL commands.
import ArgumentParser
import Foundation
import LogToolKit
import LogToolPostgres

/// `logtool`: ``LogToolCommand``'s commands followed by ``PostgresCommands/subcommands``.
struct Logtool: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "logtool",
    abstract: LogToolCommand.configuration.abstract,
    discussion: LogToolCommand.configuration.discussion,
    version: LogTool.versionText,
    subcommands: LogTool.standardSubcommands + PostgresCommands.subcommands)

  /// Without a subcommand: the help on standard error, exit 2 (bad usage).
  func run() throws {
    FileHandle.standardError.write(Data((Self.helpMessage() + "\n").utf8))
    throw ExitCode(LogTool.exitBadInput)
  }
}

LogTool.main(Logtool.self)
