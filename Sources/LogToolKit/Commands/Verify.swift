#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool verify LOG [--checkpoint FILE… --key VKEY]`: checks the hash chain, the sequence, every
  /// header and every snapshot, and that the log still holds each signed checkpoint's tree unchanged.
  public struct Verify: ParsableCommand {
    /// `verify`.
    public static let configuration = CommandConfiguration(
      abstract: "Check every entry's hash chain, gapless sequence and header, and every snapshot.",
      discussion: """
        Exits 1, naming the first bad sequence number and listing the problems, if anything is wrong. \
        The log is read in a child process: a damaged page that crashes the reader is reported as damage \
        (exit 1), and `salvage` copies what is intact. With --checkpoint FILE (repeatable) and --key VKEY, \
        it also checks that the log holds, unchanged, the tree each signed checkpoint commits to: it names \
        newest entries removed, a rewritten chain, oldest entries removed with a forged anchor, relabelled \
        meta and a bad signature. A key that did not sign a checkpoint is refused (exit 2). With --key-file,         every sealed entry and snapshot must also open with the key file: each that does not is a problem         naming its seq and key id.
        """)

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// `--json`.
    @OptionGroup public var output: OutputOptions
    /// Signed checkpoints the log must still hold.
    @Option(
      name: .customLong("checkpoint"), help: "A signed checkpoint the log must still hold (repeatable; needs --key).",
      completion: .file())
    public var checkpoints: [String] = []
    /// The verifier key of the checkpoints.
    @Option(help: "The log's verifier key file, for --checkpoint.", completion: .file()) public var key: String?

    /// Creates the command (argument parsing does this).
    public init() {}

    /// `--checkpoint` and `--key` go together.
    public func validate() throws {
      if !checkpoints.isEmpty, key == nil {
        throw ValidationError("--checkpoint needs --key VKEY, the log's verifier key")
      }
      if checkpoints.isEmpty, key != nil { throw ValidationError("--key is for --checkpoint FILE") }
    }

    /// Verifies (in a child process) and prints the summary.
    public func run() throws {
      // The key and the checkpoints are read first: bad input is refused before anything is checked.
      let verifier = try key.map { try TreeFiles.verifier($0) }
      let notes = try checkpoints.map { file -> (file: String, note: SignedNote) in
        let (note, _) = try TreeFiles.checkpoint(file)
        if let verifier, let key {
          try TreeFiles.requireSignatureLine(in: note, by: verifier, file: file, keyFile: key)
        }
        return (TreeFiles.absolute(file), note)
      }
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
      var held: [(file: String, result: CheckpointVerification)] = []
      if let verifier, !notes.isEmpty {
        let actionLog = try log.openReadOnly()
        defer { try? actionLog.close() }
        for (file, note) in notes { held.append((file, try actionLog.verify(checkpoint: note, verifier: verifier))) }
      }
      let seconds = Date().timeIntervalSince(start)
      var report = wire.report
      // With the key: every sealed entry and snapshot must open (seq and key id of each that does not).
      if log.keyFile != nil, report.isValid {
        let actionLog = try log.openReadOnly()
        defer { try? actionLog.close() }
        let opened = try actionLog.verifyDecryption { progress.update($0, $1) }
        progress.finish()
        report.problems += opened.problems
        report.truncated = report.truncated || opened.truncated
      }
      let anchor = wire.anchor
      let path = wire.path
      var out = StandardOutput()
      defer { out.flush() }

      if output.json {
        var json = VerifyReport(path: path, anchor: anchor, report: report)
        json.valid = report.isValid && held.allSatisfy(\.result.isValid)
        if !held.isEmpty {
          json.checkpoints = held.map { file, result in
            VerifyReport.Checkpoint(
              file: file, origin: result.checkpoint.origin, treeSize: result.checkpoint.size,
              rootHash: result.checkpoint.rootHash.hex, valid: result.isValid,
              compactedThrough: result.compactedThrough,
              problems: result.problems.map { .init(name: $0.name, message: $0.description) })
          }
        }
        json.seconds = (seconds * 1000).rounded() / 1000
        out.line(json.json)
      } else {
        var fields = FieldList()
        fields.add("log", path)
        fields.add("entries", "\(Format.grouped(report.entriesChecked)) checked (\(Format.range(report.range)))")
        fields.add("snapshots", "\(report.snapshotsChecked) checked")
        fields.add("anchor", anchor.text)
        fields.add("head", report.head.hex)
        fields.add("time", Format.rate(report.entriesChecked, seconds: seconds))
        for (file, result) in held {
          let checkpoint = result.checkpoint
          fields.add("checkpoint", "\(file): \(checkpoint.origin), \(checkpoint.size) entries")
          if result.isValid {
            let compacted =
              result.compactedThrough > 0
              ? " (entries 1…\(result.compactedThrough) compacted away: their stored tree hashes match)" : ""
            fields.add("", "OK: the log holds the checkpointed tree unchanged\(compacted)")
          }
          for problem in result.problems { fields.add("", "\(problem.name): \(problem.description)") }
        }
        let failedCheckpoints = held.filter { !$0.result.isValid }.count
        if report.isValid, failedCheckpoints == 0 {
          fields.add("result", "OK")
        } else if report.isValid {
          fields.add(
            "result",
            "FAILED: \(failedCheckpoints) of \(held.count) checkpoint\(held.count == 1 ? "" : "s") not held")
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
      if report.isValid, let (file, result) = held.first(where: { !$0.result.isValid }) {
        out.flush()
        throw LogToolError.logProblem(
          "\(path) does not hold the checkpoint \(file): \(result.problems[0].name): \(result.problems[0].description)")
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
#endif  // LogTool
