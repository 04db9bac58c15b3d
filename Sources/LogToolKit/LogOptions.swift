#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

/// The log directory, the first argument of every command but `import`: use it with
/// `@OptionGroup` in an app's own commands.
///
/// ```swift
/// struct Head: ParsableCommand {
///   @OptionGroup var log: LogOptions
///   func run() throws { print(try log.openReadOnly().head().seq) }
/// }
/// ```
public struct LogOptions: ParsableArguments {
  /// The log's directory, as given on the command line.
  @Argument(help: "The log directory (the one holding data.mdb).", completion: .directory)
  public var logDirectory: String

  /// `--key-file`: the key file of an encrypted log (one key per line as 64 hex digits, oldest
  /// first; `docs/security.md`). Without it, an encrypted log's entries show as *encrypted*.
  @Option(
    name: .customLong("key-file"), help: "The key file of an encrypted log (without it, entries show as encrypted).",
    completion: .file())
  public var keyFile: String?

  /// Creates options (argument parsing does this).
  public init() {}

  /// The key ring read from ``keyFile``, `nil` without one.
  ///
  /// - Throws: ``/ChronicleLog/LogError/invalidKey(reason:)`` naming the file and line.
  public func keyRing() throws -> KeyRing? {
    try keyFile.map { try KeyRing(contentsOf: URL(fileURLWithPath: $0)) }
  }

  /// ``logDirectory`` as a file URL.
  public var url: URL { URL(fileURLWithPath: logDirectory) }

  /// The absolute, standardized path, as errors name it.
  public var path: String { url.standardizedFileURL.path }

  /// Opens the log read-only: never writes a byte, works while an app writes.
  ///
  /// - Throws: ``/ChronicleLog/LogError`` naming the path (no such path, not a directory, not a log, newer format).
  public func openReadOnly() throws -> ActionLog {
    try ActionLog(
      directory: url, access: .readOnly, options: .init(keyRing: try keyRing(), returnsSealedEntries: true))
  }
}
#endif  // LogTool
