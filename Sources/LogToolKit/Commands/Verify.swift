import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool verify LOG`: checks the hash chain, the sequence, every header and every snapshot.
  public struct Verify: ParsableCommand {
    /// `verify`.
    public static let configuration = CommandConfiguration(
      abstract: "Check every entry's hash chain, gapless sequence and header, and every snapshot.",
      discussion: """
        Exits 1, naming the first bad sequence number and listing the problems, if anything is wrong. \
        The log is read in a child process: a damaged page that crashes the reader is reported as damage \
        (exit 1), and `salvage` copies what is intact.
        """)

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Verifies (in a child process) and prints the summary.
    public func run() throws {
      let progress = ProgressBar("verify")
      let start = Date()
      var checked = 0
      let ending = try IsolatedScan.run(.init(operation: .verify, source: log.path)) { line in
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "progress", let done = Int(fields[1]), let total = Int(fields[2]) else {
          return
        }
        checked = done
        progress.update(done, total)
      }
      progress.finish()
      let wire: VerifyWire
      switch ending {
      case .report(let json)?:
        wire = try VerifyWire.decode(json)
      case .exited(let status)?:
        throw ExitCode(status)
      case .killed(let signal)?:
        let after = checked > 0 ? " after \(Format.grouped(checked)) entries checked" : ""
        throw LogToolError.logProblem(
          "\(log.path) is damaged: reading it killed the verifier with \(IsolatedScan.signalName(signal))\(after); "
            + "`salvage` copies what is intact")
      case nil:
        // The executable cannot run the check in a child: check here.
        wire = try VerifyWire.decode(
          try IsolatedScan.verifyInProcess(log.url) { progress.update($0, $1) })
        progress.finish()
      }
      let seconds = Date().timeIntervalSince(start)
      let report = wire.report
      let anchor = wire.anchor
      let path = wire.path
      var out = StandardOutput()
      defer { out.flush() }

      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", path)
        json.field("valid", report.isValid)
        json.field("entriesChecked", report.entriesChecked)
        json.field("snapshotsChecked", report.snapshotsChecked)
        json.key("range")
        if let range = report.range {
          json.beginObject()
          json.field("first", range.lowerBound)
          json.field("last", range.upperBound)
          json.endObject()
        } else {
          json.null()
        }
        json.key("anchor")
        anchor.writeJSON(into: &json)
        json.field("head", report.head.hex)
        json.key("firstBadSeq")
        if let seq = report.firstBadSeq { json.uint(seq) } else { json.null() }
        json.key("problems")
        json.beginArray()
        for problem in report.problems {
          json.beginObject()
          json.field("location", problem.location.description)
          json.field("message", problem.message)
          json.endObject()
        }
        json.endArray()
        json.field("truncated", report.truncated)
        json.key("seconds")
        json.double((seconds * 1000).rounded() / 1000)
        json.endObject()
        out.line(json.text)
      } else {
        var fields = FieldList()
        fields.add("log", path)
        fields.add("entries", "\(Format.grouped(report.entriesChecked)) checked (\(Format.range(report.range)))")
        fields.add("snapshots", "\(report.snapshotsChecked) checked")
        fields.add("anchor", anchor.text)
        fields.add("head", report.head.hex)
        fields.add("time", Format.rate(report.entriesChecked, seconds: seconds))
        if report.isValid {
          fields.add("result", "OK")
        } else {
          let first = report.firstBadSeq.map { ", first bad entry \($0)" } ?? ""
          let count = "\(report.problems.count)\(report.truncated ? "+" : "")"
          fields.add("result", "FAILED: \(count) problem\(report.problems.count == 1 ? "" : "s")\(first)")
        }
        for line in fields.lines { out.line(line) }
        if !report.isValid {
          out.line("problems")
          for problem in report.problems { out.line("  \(problem)") }
          if report.truncated { out.line("  … more problems were found than are listed") }
        }
      }
      guard report.isValid else {
        out.flush()
        let location = report.firstBadSeq.map { "at entry \($0)" } ?? "at \(report.problems[0].location)"
        throw LogToolError.logProblem(
          "\(path) does not verify: first problem \(location): \(report.problems[0].message)")
      }
    }
  }
}
