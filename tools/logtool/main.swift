// The `logtool` executable: every generic command of LogToolKit, and with the package's traits
// `serve` (Inspector: ChronicleInspector) and the PostgreSQL commands (Postgres: LogToolPostgres).
// `swift build -c release --product logtool --traits Postgres,Inspector` builds the full one;
// `--traits LogTool` one without them, and without NIO.
import ArgumentParser
import Foundation
import LogToolKit

#if Inspector
  import ChronicleInspector
#endif
#if Postgres
  import LogToolPostgres
#endif

/// `logtool`: LogToolKit's commands plus, as built, the web inspector and the PostgreSQL commands.
struct LogToolWithServe: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: LogToolCommand.configuration.commandName,
    abstract: LogToolCommand.configuration.abstract,
    discussion: LogToolCommand.configuration.discussion,
    version: LogToolCommand.configuration.version,
    subcommands: LogTool.standardSubcommands + optionalSubcommands)

  /// `serve` and the PostgreSQL commands, those the build's traits include.
  static var optionalSubcommands: [any ParsableCommand.Type] {
    var commands: [any ParsableCommand.Type] = []
    #if Inspector
      commands.append(LogTool.Serve.self)
    #endif
    #if Postgres
      commands += PostgresCommands.subcommands
    #endif
    return commands
  }

  /// Without a subcommand: the help on standard error, and exit 2 (bad usage).
  func run() async throws {
    FileHandle.standardError.write(Data((Self.helpMessage() + "\n").utf8))
    throw ExitCode(LogTool.exitBadInput)
  }
}

await LogTool.main(LogToolWithServe.self)
