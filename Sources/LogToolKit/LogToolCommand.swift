#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

/// The root command of the `logtool` executable: ``LogTool/standardSubcommands``.
public struct LogToolCommand: AsyncParsableCommand {
  /// `logtool` and its subcommands.
  public static let configuration = CommandConfiguration(
    commandName: "logtool",
    abstract: "Inspect, verify, tail, export, import and compact a Chronicle log; sign, prove and audit its history.",
    discussion: """
      Every command but import and compact opens the log read-only, so it works while an app writes.
      Exit codes: 0 fine, 1 the log has problems, 2 bad usage or bad input.
      """,
    version: LogTool.versionText,
    subcommands: LogTool.standardSubcommands)

  /// Creates the command (argument parsing does this).
  public init() {}

  /// Without a subcommand: prints the help on standard error and exits 2 (bad usage).
  public func run() async throws {
    StandardError.write(Self.helpMessage())
    throw ExitCode(LogTool.exitBadInput)
  }
}
#endif  // LogTool
