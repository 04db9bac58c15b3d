#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool rekey LOG [--key-file OLD] (--new-key-file NEW | --decrypt)`.
  public struct Rekey: ParsableCommand {
    /// `rekey`.
    public static let configuration = CommandConfiguration(
      abstract: "Rewrite every entry and snapshot under a new key (or encrypt or decrypt a log).",
      discussion: """
        Stop the app first: rekeying needs the writer lock. --key-file opens the log as it is (leave it out \
        for a log in the clear); --new-key-file's newest key seals the rewritten log, --decrypt writes it in \
        the clear. The chain, the tree and the log id are new: sign a new checkpoint afterwards. A killed \
        rekey leaves the old log or the new one; run it again to finish.
        """)

    /// The log directory and `--key-file`.
    @OptionGroup public var log: LogOptions
    /// The new key file.
    @Option(help: "The key file whose newest key seals the rewritten log.", completion: .file())
    public var newKeyFile: String?
    /// Write the log in the clear.
    @Flag(help: "Rewrite the log in the clear.") public var decrypt = false
    /// Hide type names in the rewritten log.
    @Flag(help: "Seal the type names too (by default they stay readable without the key).")
    public var sealTypeNames = false
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Exactly one of `--new-key-file` and `--decrypt`.
    public func validate() throws {
      switch (newKeyFile, decrypt) {
      case (nil, false): throw ValidationError("say what seals the rewritten log: --new-key-file FILE or --decrypt")
      case (.some, true): throw ValidationError("--new-key-file and --decrypt exclude each other")
      default: break
      }
    }

    /// Rekeys and prints the report.
    public func run() throws {
      let newRing = try newKeyFile.map {
        try KeyRing(contentsOf: URL(fileURLWithPath: $0), sealsTypeNames: sealTypeNames)
      }
      let progress = ProgressBar("rekey")
      let report = try ActionLog.rekey(directory: log.url, from: try log.keyRing(), to: newRing) { done, total in
        progress.update(done, total)
      }
      progress.finish()
      var out = StandardOutput()
      defer { out.flush() }
      let key = report.keyID.map(EncryptionKey.idText)
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", report.path)
        json.field("entries", report.entries)
        json.field("snapshots", report.snapshots)
        json.key("keyID")
        if let key { json.string(key) } else { json.null() }
        json.field("logID", report.logID.hex)
        json.endObject()
        out.line(json.text)
        return
      }
      out.line(
        "rekeyed \(report.path): \(report.entries) entries and \(report.snapshots) snapshots "
          + (key.map { "sealed with key \($0)" } ?? "in the clear") + ", new log id \(report.logID.hex)")
    }
  }
}
#endif  // LogTool
