#if Postgres && LogTool
import ArgumentParser

// MARK: - The PostgreSQL commands

/// `logtool`'s PostgreSQL commands, kept apart from LogToolKit so that it does not depend on NIO:
/// `ship` (a log's new entries to the server, once or following), `pull` (a device's log rebuilt
/// from the server) and `server-verify` (the server's chains re-verified). `docs/postgres.md`
/// describes them.
///
/// ```swift
/// import ArgumentParser
/// import LogToolKit
/// import LogToolPostgres
///
/// struct MyTool: AsyncParsableCommand {
///   static let configuration = CommandConfiguration(
///     commandName: "my-tool", subcommands: LogTool.standardSubcommands + PostgresCommands.subcommands)
/// }
/// ```
public enum PostgresCommands {
  /// `ship`, `pull` and `server-verify`.
  public static let subcommands: [ParsableCommand.Type] = [Ship.self, Pull.self, ServerVerify.self]
}
#endif  // Postgres && LogTool
