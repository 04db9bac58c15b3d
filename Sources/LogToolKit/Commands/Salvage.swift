#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool salvage DIR OUT`: copies the intact part of a damaged log into a new one.
  public struct Salvage: ParsableCommand {
    /// `salvage`.
    public static let configuration = CommandConfiguration(
      abstract: "Copy every entry of a damaged log that still reads and verifies into a new log.",
      discussion: """
        Entries are copied from the anchor while each one reads, follows in sequence and passes its hash \\
        check; snapshots are copied when their checksum and chain hash check. The damaged log is only read, \\
        in a child process, so a page that crashes the reader is reported and the copy resumes after it. \\
        OUT must not exist or be empty (or hold an earlier salvage of this log, which is resumed). \\
        Signed checkpoints are kept when the copied entries still produce them, and dropped (and \\
        reported) otherwise. Prints exactly what was lost and exits 1 if anything was.
        """)

    /// The damaged log.
    @OptionGroup public var log: LogOptions
    /// The new log's directory.
    @Argument(help: "The directory of the new log (absent or empty).", completion: .directory)
    public var destination: String
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Salvages, prints what was copied and lost, and exits 1 if anything was lost.
    public func run() throws {
      let report = try salvage()
      var out = StandardOutput()
      defer { out.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", report.source)
        json.field("destination", report.destination)
        json.field("complete", report.isComplete)
        if let repair = report.metaPageRepair { json.field("metaPageRepair", repair) }
        json.field("entriesCopied", report.entriesCopied)
        json.key("anchor")
        report.anchor.writeJSON(into: &json)
        json.key("head")
        report.head.writeJSON(into: &json)
        json.key("sourceLastSeq")
        if let seq = report.sourceLastSeq { json.uint(seq) } else { json.null() }
        json.key("firstLostSeq")
        if let seq = report.firstLostSeq { json.uint(seq) } else { json.null() }
        json.key("stopReason")
        if let reason = report.stopReason { json.string(reason) } else { json.null() }
        json.key("snapshotsCopied")
        json.beginArray()
        for seq in report.snapshotsCopied { json.uint(seq) }
        json.endArray()
        json.key("snapshotsLost")
        json.beginArray()
        for lost in report.snapshotsLost {
          json.beginObject()
          json.field("seq", lost.seq)
          json.field("reason", lost.reason)
          json.endObject()
        }
        json.endArray()
        json.key("checkpointsKept")
        json.beginArray()
        for size in report.checkpointsKept { json.uint(size) }
        json.endArray()
        json.key("checkpointsDropped")
        json.beginArray()
        for dropped in report.checkpointsDropped {
          json.beginObject()
          json.field("size", dropped.size)
          json.field("reason", dropped.reason)
          json.endObject()
        }
        json.endArray()
        json.endObject()
        out.line(json.text)
      } else {
        var fields = FieldList()
        fields.add("log", report.source)
        fields.add("salvaged to", report.destination)
        if let repair = report.metaPageRepair { fields.add("meta page", repair) }
        let copied = report.entriesCopied == 0 ? nil : (report.anchor.seq + 1)...report.head.seq
        fields.add("entries", "\(Format.grouped(report.entriesCopied)) copied (\(Format.range(copied)))")
        fields.add("snapshots", "\(report.snapshotsCopied.count) copied, \(report.snapshotsLost.count) lost")
        fields.add("head", report.head.hash.hex)
        if let first = report.firstLostSeq, let reason = report.stopReason {
          if let lost = report.lostEntries {
            fields.add("lost", "entries \(lost.lowerBound)…\(lost.upperBound) (\(lost.upperBound - lost.lowerBound + 1)): \(reason)")
          } else {
            fields.add("lost", "entries from \(first) on (the damaged log's last entry cannot be read): \(reason)")
          }
        }
        for lost in report.snapshotsLost { fields.add("lost", "\(lost)") }
        fields.add("checkpoints", "\(report.checkpointsKept.count) kept, \(report.checkpointsDropped.count) dropped")
        for dropped in report.checkpointsDropped { fields.add("dropped", "\(dropped)") }
        fields.add("result", report.isComplete ? "COMPLETE: nothing was lost" : "DATA LOST")
        for line in fields.lines { out.line(line) }
      }
      guard report.isComplete else {
        out.flush()
        var lost: [String] = []
        if let range = report.lostEntries {
          lost.append("entries \(range.lowerBound)…\(range.upperBound)")
        } else if let first = report.firstLostSeq {
          lost.append("entries from \(first) on")
        }
        if !report.snapshotsLost.isEmpty {
          lost.append("snapshots \(report.snapshotsLost.map { String($0.seq) }.joined(separator: ", "))")
        }
        if !report.checkpointsDropped.isEmpty {
          lost.append("the checkpoints of sizes \(report.checkpointsDropped.map { String($0.size) }.joined(separator: ", "))")
        }
        throw LogToolError.logProblem(
          "\(report.source): lost \(lost.joined(separator: " and ")); the intact part is in \(report.destination)")
      }
    }

    /// Runs the salvage in child processes, resuming after a child that a damaged page killed.
    private func salvage() throws -> SalvageReport {
      let source = log.path
      let destination = URL(fileURLWithPath: destination).standardizedFileURL.path
      var options = SalvageOptions()
      // `nil`: not known yet; `.some(nil)`: it could not be read.
      var sourceHead: UInt64?? = nil
      // Why the copy of entries stopped, once a child finished it (`.some(nil)`: it reached the end).
      var entriesStop: String?? = nil
      var killedReadingEntry: String?
      for _ in 0..<64 {
        var lastLine = ""
        let ending = try IsolatedScan.run(
          .init(operation: .salvage, source: source, destination: destination, options: options)
        ) { line in
          lastLine = line
          let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
          switch parts.first {
          case "source-head": sourceHead = .some(parts.count == 2 ? UInt64(parts[1]) : nil)
          case "entries-done": entriesStop = .some(parts.count == 2 ? parts[1] : nil)
          default: break
          }
        }
        switch ending {
        case .report(let json)?:
          var report = try SalvageWire.decode(json).report
          if !options.readsSourceHead { report.sourceLastSeq = sourceHead ?? nil }
          if !options.copiesEntries {
            if let killedReadingEntry {
              report.stopReason = "entry \(report.head.seq + 1): \(killedReadingEntry)"
            } else {
              report.stopReason = entriesStop ?? nil
            }
          }
          return report
        case .exited(let status)?:
          throw ExitCode(status)
        case nil:
          return try ActionLog.salvage(from: log.url, into: URL(fileURLWithPath: destination))
        case .killed(let signal)?:
          let death = "reading it killed the reader with \(IsolatedScan.signalName(signal))"
          if lastLine.hasPrefix("snapshot "), let seq = UInt64(lastLine.dropFirst("snapshot ".count)) {
            options.skippedSnapshots[seq] = death
            options.copiesEntries = false
          } else if options.readsSourceHead, sourceHead == nil {
            // It died reading the last entry's key: go on without knowing where the log ends.
            sourceHead = .some(nil)
          } else if options.copiesEntries, options.batchSize > 1 {
            // Entries read since the last commit were not kept: copy them one at a time.
            options.batchSize = 1
          } else if options.copiesEntries {
            killedReadingEntry = death
            options.copiesEntries = false
          } else {
            throw LogToolError.logProblem("\(source) is damaged: \(death) during the salvage")
          }
          options.readsSourceHead = false
        }
      }
      throw LogToolError.logProblem("\(source) is damaged: the salvage's reader was killed too many times")
    }
  }
}
#endif  // LogTool
