#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `logtool`'s commands as a library, so that an app can build its own tool with
/// every generic command plus typed ones that know its reducer.
///
/// ```swift
/// import ArgumentParser
/// import LogToolKit
///
/// @main
/// struct LedgerTool: AsyncParsableCommand {
///   static let configuration = CommandConfiguration(
///     commandName: "ledger-tool",
///     subcommands: LogTool.standardSubcommands + [StateAt.self])
///
///   static func main() async { await LogTool.main(LedgerTool.self) }
/// }
///
/// struct StateAt: ParsableCommand {
///   @OptionGroup var log: LogOptions      // the log directory, as every command takes it
///   @OptionGroup var output: OutputOptions  // --json
///   @Argument var seq: UInt64
///   func run() throws {
///     let actionLog = try log.openReadOnly()
///     …
///   }
/// }
/// ```
///
/// ``main(_:arguments:)`` gives the app's tool `logtool`'s exit codes: 0 fine, 1 the
/// log has problems, 2 bad usage or bad input (with one line on standard error).
public enum LogTool {
  /// Every generic command: `info`, `list`, `show`, `tail`, `verify`, `stats`,
  /// `snapshots`, `export`, `import`, `compact`, `salvage`, and those of the verifiable log:
  /// `keygen`, `checkpoint`, `prove`, `consistency`, `audit`, `witness`, `rekey`; and `sync-status`, for a
  /// shared stream's device copy.
  public static let standardSubcommands: [ParsableCommand.Type] = [
    Info.self, List.self, Show.self, Tail.self, Verify.self, Stats.self, Snapshots.self, Export.self, Import.self,
    Compact.self, Salvage.self, Keygen.self, CheckpointCommand.self, Prove.self, Consistency.self, Audit.self,
    Witness.self, Rekey.self, SyncStatus.self,
  ]

  /// The exit status: everything is fine.
  public static let exitSuccess: Int32 = 0
  /// The exit status: the log has problems (verification failed, a corrupt entry was met).
  public static let exitLogProblem: Int32 = 1
  /// The exit status: bad usage or bad input (no such path, not a log, newer format, locked, unknown seq).
  public static let exitBadInput: Int32 = 2

  /// The version of `logtool` and LogToolKit, printed by `logtool --version`.
  public static let version = "0.1.0"

  /// `--version`'s text: the tool's version and the log formats it reads and writes (1, in the
  /// clear, through 2, encrypted).
  public static var versionText: String {
    "\(version) (log formats \(ActionLog.formatVersion)–\(ActionLog.encryptedFormatVersion))"
  }

  /// Parses `arguments` (the process's when `nil`) for `root` and its subcommands, runs
  /// the command (awaiting an `AsyncParsableCommand`'s `run()`), and exits with `logtool`'s
  /// exit codes.
  ///
  /// Unlike `ParsableCommand.main()`, usage and validation errors exit with 2 (not 64);
  /// `--help` still prints help and exits with 0. A command's error is printed as one
  /// line, `NAME: message`, on standard error.
  ///
  /// `SIGPIPE` is ignored: when the reader of standard output goes away
  /// (`logtool list LOG | head -1`), the command stops at its next write, ends its read
  /// transaction normally (a process killed inside one leaves a stale reader slot that
  /// makes a live writer's file grow) and exits 0, as `git log | head` does.
  public static func main(_ root: ParsableCommand.Type, arguments: [String]? = nil) async -> Never {
    signal(SIGPIPE, SIG_IGN)
    IsolatedScan.serveIfRequested(toolName: root.configuration.commandName ?? "logtool")
    exit(await execute(root, arguments: arguments))
  }

  /// Parses and runs as ``main(_:arguments:)`` does, and returns the exit status instead of
  /// exiting (help and usage go to standard output and error as there). Tests run commands
  /// in process with it, capturing their output with ``OutputCapture``.
  package static func execute(_ root: ParsableCommand.Type, arguments: [String]? = nil) async -> Int32 {
    let name = root.configuration.commandName ?? "logtool"
    var command: ParsableCommand
    do {
      command = try root.parseAsRoot(arguments)
    } catch {
      if root.exitCode(for: error) == .success {
        StandardOutput.print(root.fullMessage(for: error))
        return exitSuccess
      }
      if let negative = negativeNumber(in: arguments ?? Array(CommandLine.arguments.dropFirst())) {
        StandardError.write("\(name): \(negative)")
        return exitBadInput
      }
      StandardError.write(root.fullMessage(for: error))
      return exitBadInput
    }
    do {
      if var command = command as? AsyncParsableCommand {
        try await command.run()
      } else {
        try command.run()
      }
      return exitSuccess
    } catch is OutputClosed {
      return exitSuccess
    } catch _ where StandardOutput.isClosed {
      // Whatever failed after the reader of standard output left, nobody reads the result.
      return exitSuccess
    } catch let code as ExitCode {
      return code.rawValue
    } catch let error where error is LogToolError || error is LogError || error is TreeError {
      let status = exitStatus(for: error)
      StandardError.write("\(name): \(Self.oneLine(status.message))")
      return status.code
    } catch {
      // The parser's own errors (help requests, validation) thrown from `run()`.
      switch root.exitCode(for: error) {
      case .success:
        StandardOutput.print(root.fullMessage(for: error))
        return exitSuccess
      case .validationFailure:
        StandardError.write(root.fullMessage(for: error))
        return exitBadInput
      default:
        StandardError.write("\(name): \(Self.oneLine(exitStatus(for: error).message))")
        return exitStatus(for: error).code
      }
    }
  }

  /// `message` on one line: a line break or another control character inside it (a path may hold
  /// one) is written as an escape (`\n`, `\u{1B}`), so that every error stays one line.
  static func oneLine(_ message: String) -> String {
    guard message.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
      return message
    }
    var text = ""
    for scalar in message.unicodeScalars {
      if scalar.properties.generalCategory == .control {
        text += scalar.escaped(asASCII: true)
      } else {
        text.unicodeScalars.append(scalar)
      }
    }
    return text
  }

  /// The flags (options without a value) of the standard commands.
  private static let flags: Set<String> = ["--json", "-f", "--follow", "--discard", "--witness", "-h", "--help"]

  /// What to say when parsing failed over a negative number: the parser takes `-1` for an
  /// option, so `show LOG -1` and `--limit -1` would otherwise report a missing value.
  private static func negativeNumber(in arguments: [String]) -> String? {
    for (index, argument) in arguments.enumerated() {
      guard argument.count > 1, argument.hasPrefix("-"), Double(argument) != nil else { continue }
      let previous = index > 0 ? arguments[index - 1] : ""
      if previous.hasPrefix("-"), !flags.contains(previous), Double(previous) == nil {
        return "\(previous) must not be negative (got \(argument))"
      }
      return "\(argument): sequence numbers and counts must not be negative"
    }
    return nil
  }

  /// The exit code and one-line message for an error a command threw.
  public static func exitStatus(for error: any Error) -> (code: Int32, message: String) {
    switch error {
    case let error as LogToolError:
      return (error.exitCode, error.message)
    case let error as LogError:
      switch error {
      case .corruptEntry, .corruptSnapshot, .corruptMeta, .storage, .closed, .codec, .fileTooLarge, .logHasProblems,
        .decryptionFailed, .snapshotDecryptionFailed:
        return (exitLogProblem, error.description)
      case .noSuchLog, .notADirectory, .notALog, .newerFormat, .appMismatch, .locked, .permissionDenied, .readOnly,
        .noSuchEntry, .invalidEntry, .openReadOnlyInThisProcess, .invalidExport, .destinationExists, .io,
        .noSnapshot, .jumpAcrossCut, .invalidKey, .keyMissing, .encryptionMismatch, .snapshotKeyMissing,
        .changedByAnotherWriter, .writerAppeared, .unfinishedImport, .noSpace:
        return (exitBadInput, error.description)
      }
    case let error as TreeError:
      switch error {
      case .invalidProof, .badSignature, .witnessRefused:
        return (exitLogProblem, error.description)
      case .malformedCheckpoint, .malformedNote, .malformedKey, .outOfRange, .noTree, .missingHash:
        return (exitBadInput, error.description)
      }
    default:
      return (exitLogProblem, "\(error)")
    }
  }
}
#endif  // LogTool
