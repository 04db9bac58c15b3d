#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool compact LOG --before SEQ (--archive FILE | --discard)`.
  public struct Compact: ParsableCommand {
    /// `compact`.
    public static let configuration = CommandConfiguration(
      abstract: "Remove the entries up to the newest snapshot at or before SEQ and shrink the file.",
      discussion: """
        Stop the app first: compaction needs the writer lock, and processes that keep the log open keep \
        reading the old file. With --archive the removed entries are first written to FILE (an export that \
        import turns back into a log); --discard drops them. The log verifies before and after, and a killed \
        compaction leaves the old log or the compacted one; run it again to finish. An encrypted log needs \
        --key-file: the snapshot it cuts at must open; records are carried as stored, never re-sealed.
        """)

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// Where to cut.
    @Option(help: "Cut at the newest snapshot at or before this sequence number.") public var before: UInt64
    /// The archive file.
    @Option(help: "Write the removed entries to this export file first.", completion: .file())
    public var archive: String?
    /// Drop the entries.
    @Flag(help: "Remove the entries without keeping a copy.") public var discard = false
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Exactly one of `--archive` and `--discard`.
    public func validate() throws {
      switch (archive, discard) {
      case (nil, false): throw ValidationError("say what happens to the removed entries: --archive FILE or --discard")
      case (.some, true): throw ValidationError("--archive and --discard exclude each other")
      default: break
      }
    }

    /// Compacts and prints the report.
    public func run() throws {
      let progress = ProgressBar("compact")
      let disposal: CompactionDisposal = archive.map { .archive(URL(fileURLWithPath: $0)) } ?? .discard
      let report = try ActionLog.compact(
        directory: log.url, before: before, disposal: disposal, keyRing: try log.keyRing()
      ) { stage, done, total in
        progress.phase(stage.rawValue)
        progress.update(done, total)
      }
      progress.finish()
      var out = StandardOutput()
      defer { out.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", report.path)
        json.field("requested", report.requested)
        json.field("cut", report.cut)
        json.field("entriesRemoved", report.entriesRemoved)
        json.field("snapshotsRemoved", report.snapshotsRemoved)
        json.key("anchorBefore")
        report.anchorBefore.writeJSON(into: &json)
        json.key("anchorAfter")
        report.anchorAfter.writeJSON(into: &json)
        json.key("archive")
        if let archive = report.archive { TransferSummary.write(archive, into: &json) } else { json.null() }
        json.field("archiveReused", report.archiveReused)
        json.field("bytesBefore", report.bytesBefore)
        json.field("bytesAfter", report.bytesAfter)
        json.endObject()
        out.line(json.text)
        return
      }
      var fields = FieldList()
      fields.add("log", report.path)
      fields.add("cut at", "\(report.cut) (the newest snapshot at or before \(report.requested))")
      if report.entriesRemoved == 0 {
        fields.add("removed", "nothing: the log already starts after \(report.cut)")
      } else {
        fields.add(
          "removed",
          "\(Format.grouped(report.entriesRemoved)) entries (\(report.anchorBefore.seq + 1)…\(report.cut)), "
            + "\(report.snapshotsRemoved) snapshot\(report.snapshotsRemoved == 1 ? "" : "s")")
      }
      if let archive = report.archive {
        fields.add(
          "archive",
          "\(archive.path ?? "-") (\(Format.grouped(archive.entries)) entries\(report.archiveReused ? ", reused" : ""))"
        )
      } else if report.entriesRemoved > 0 {
        fields.add("archive", "none: discarded")
      }
      fields.add("anchor", report.anchorAfter.text)
      fields.add("file size", "\(Format.bytes(report.bytesBefore)) → \(Format.bytes(report.bytesAfter))")
      for line in fields.lines { out.line(line) }
    }
  }
}
#endif  // LogTool
