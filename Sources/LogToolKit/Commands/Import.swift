#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool import FILE --into DIR`: rebuilds a log from an export.
  public struct Import: ParsableCommand {
    /// `import`.
    public static let configuration = CommandConfiguration(
      abstract: "Rebuild a log from an export (or a compaction archive); it verifies after.",
      discussion: "Every line is checked (each entry's hash is recomputed) and the log is built in a hidden "
        + "directory beside DIR (.DIR.import-PID-*), then renamed into place: a refused import leaves nothing "
        + "behind; the directory of a killed one is removed by the next import into DIR (info lists it). "
        + "DIR must not exist or be empty.")

    /// The export file.
    @Argument(help: "The export file.", completion: .file()) public var file: String
    /// The new log's directory.
    @Option(help: "The directory of the new log (absent or empty).", completion: .directory) public var into: String
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Imports and prints a summary.
    public func run() throws {
      let progress = ProgressBar("import")
      let report = try ActionLog.importLog(
        from: URL(fileURLWithPath: file), into: URL(fileURLWithPath: into), progress: progress.update)
      progress.finish()
      var out = StandardOutput()
      defer { out.flush() }
      TransferSummary.print(report, verb: "imported", json: output.json, extra: [("verify", "OK")], to: &out)
    }
  }
}
#endif  // LogTool
