#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool export LOG --output FILE`: the whole log as lossless JSON Lines.
  public struct Export: ParsableCommand {
    /// `export`.
    public static let configuration = CommandConfiguration(
      abstract: "Write the log as JSON Lines, losslessly: import rebuilds it byte for byte.",
      discussion: "The file is written as FILE.partial (created exclusively, never through a link), synced, and "
        + "linked as FILE: it appears complete or not at all. A FILE.partial that is not an unfinished export is "
        + "refused; an existing FILE is never replaced. '-' writes to standard output. An encrypted log is "
        + "exported as stored (ciphertext, export format 3): no key is needed, and none makes it decrypt.")

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// Where to write.
    @Option(name: .shortAndLong, help: "The export file to create ('-' for standard output).")
    public var output: String
    /// `--json`.
    @OptionGroup public var format: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Exports and prints a summary.
    public func run() throws {
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let progress = ProgressBar("export")
      var out = StandardOutput()
      defer { out.flush() }
      if output == "-" {
        // Stops as soon as the reader of standard output went away (`| head`): exit 0.
        try actionLog.export(progress: progress.update) { chunk in
          out.write(chunk)
          out.flush()
          if out.isClosed { throw OutputClosed() }
        }
        progress.finish()
        return
      }
      let report = try actionLog.export(to: URL(fileURLWithPath: output), progress: progress.update)
      progress.finish()
      TransferSummary.print(report, verb: "exported", json: format.json, to: &out)
    }
  }
}

/// The summary `export`, `import` and `compact` print about an export file.
enum TransferSummary {
  static func print(
    _ report: TransferReport, verb: String, json: Bool, extra: [(String, String)] = [], to out: inout StandardOutput
  ) {
    if json {
      var writer = JSONWriter()
      write(report, into: &writer)
      out.line(writer.text)
      return
    }
    var fields = FieldList()
    fields.add(
      verb,
      "\(Format.grouped(report.entries)) entries (\(Format.range(report.range))), \(report.snapshots.count) snapshots")
    fields.add(verb == "imported" ? "into" : "to", report.path ?? "-")
    fields.add("app", report.meta.appID.isEmpty ? "(none)" : report.meta.appID)
    fields.add("anchor", report.meta.anchor.text)
    fields.add("head", report.head.text)
    if verb != "imported" { fields.add("size", Format.bytes(report.bytes)) }
    for (name, value) in extra { fields.add(name, value) }
    for line in fields.lines { out.line(line) }
  }

  static func write(_ report: TransferReport, into json: inout JSONWriter) {
    json.beginObject()
    json.field("path", report.path ?? "-")
    json.field("appID", report.meta.appID)
    json.field("entries", report.entries)
    json.key("range")
    if let range = report.range {
      json.beginObject()
      json.field("first", range.lowerBound)
      json.field("last", range.upperBound)
      json.endObject()
    } else {
      json.null()
    }
    json.key("snapshots")
    json.beginArray()
    for seq in report.snapshots { json.uint(seq) }
    json.endArray()
    json.key("anchor")
    report.meta.anchor.writeJSON(into: &json)
    json.key("head")
    report.head.writeJSON(into: &json)
    json.field("bytes", report.bytes)
    json.endObject()
  }
}
#endif  // LogTool
