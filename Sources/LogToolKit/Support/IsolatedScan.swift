#if LogTool
import ChronicleLog
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reading a damaged log in a child process.
///
/// A damaged page can make LMDB abort or crash the process that reads it (a
/// page number past the file's end, a corrupt branch page). `verify` and
/// `salvage` therefore run the tool's own executable again as a child, with
/// the request in an environment variable, and report how the child ended:
/// a report on its standard output, an error it printed (with its exit
/// status), or a signal that killed it. ``LogTool/main(_:arguments:)`` serves
/// the request in the child before it parses any arguments.
enum IsolatedScan {
  /// The environment variable that carries a request to the child.
  static let variable = "LOGTOOL_ISOLATED_SCAN"

  /// Whether this executable serves requests: set by ``LogTool/main(_:arguments:)``. An
  /// executable that runs commands otherwise (a demo parsing them itself) would, started
  /// again, run its own code instead: commands then read in their own process.
  static let executableServesRequests = Atomic<Bool>(false)

  /// What the child is asked to do.
  struct Request: Codable {
    enum Operation: String, Codable {
      case verify
      case salvage
    }
    var operation: Operation
    var source: String
    var destination: String?
    var options: SalvageOptions?
  }

  /// How the child ended.
  enum Ending {
    /// It printed `report JSON`.
    case report(String)
    /// It exited with this status without a report (it printed its error on standard error).
    case exited(Int32)
    /// A signal killed it.
    case killed(Int32)
  }

  // MARK: - Parent

  /// Runs `request` in a child process, handing each line it prints (but the report) to `line`.
  ///
  /// Returns `nil` when the executable cannot serve requests (a tool that does not
  /// start through ``LogTool/main(_:arguments:)``): the caller then reads in process.
  static func run(_ request: Request, line: (String) -> Void) throws -> Ending? {
    guard executableServesRequests.load(ordering: .relaxed), let executable = Bundle.main.executableURL else {
      return nil
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = []
    var environment = ProcessInfo.processInfo.environment
    environment[variable] = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
    // A crash is an expected outcome here: no backtrace on standard error.
    environment["SWIFT_BACKTRACE"] = "enable=no"
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardInput = FileHandle.nullDevice
    // The child's standard error goes to a file, passed on only if the child ended by itself:
    // what a crashing process prints (LMDB's assertion text, the runtime's) is not the tool's one line.
    let errorFile = FileManager.default.temporaryDirectory
      .appendingPathComponent("logtool-scan-\(UUID().uuidString).stderr")
    guard FileManager.default.createFile(atPath: errorFile.path, contents: nil),
      let errorHandle = try? FileHandle(forWritingTo: errorFile)
    else { return nil }
    defer {
      try? errorHandle.close()
      try? FileManager.default.removeItem(at: errorFile)
    }
    process.standardError = errorHandle
    try process.run()
    var buffer: [UInt8] = []
    var report: String?
    var answered = false
    func handle(_ text: String) {
      if text == "ready" {
        answered = true
      } else if text.hasPrefix("report ") {
        report = String(text.dropFirst("report ".count))
      } else {
        line(text)
      }
    }
    while true {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      buffer.append(contentsOf: chunk)
      while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        handle(String(decoding: buffer[..<newline], as: UTF8.self))
        buffer.removeSubrange(...newline)
      }
    }
    if !buffer.isEmpty { handle(String(decoding: buffer, as: UTF8.self)) }
    process.waitUntilExit()
    if process.terminationReason == .uncaughtSignal { return .killed(process.terminationStatus) }
    if let errors = try? Data(contentsOf: errorFile), !errors.isEmpty {
      StandardError.raw(String(decoding: errors, as: UTF8.self))
    }
    if let report { return .report(report) }
    return answered ? .exited(process.terminationStatus) : nil
  }

  /// `SIGSEGV (11)`.
  static func signalName(_ signal: Int32) -> String {
    let names: [Int32: String] = [
      SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGABRT: "SIGABRT", SIGILL: "SIGILL", SIGFPE: "SIGFPE",
      SIGKILL: "SIGKILL", SIGTRAP: "SIGTRAP", SIGTERM: "SIGTERM",
    ]
    return "\(names[signal] ?? "signal") (\(signal))"
  }

  // MARK: - Child

  /// If this process is a child started by ``run(_:line:)``, serves the request and exits.
  static func serveIfRequested(toolName: String) {
    executableServesRequests.store(true, ordering: .relaxed)
    guard let text = ProcessInfo.processInfo.environment[variable] else { return }
    unsetenv(variable)
    say("ready")
    do {
      let request = try JSONDecoder().decode(Request.self, from: Data(text.utf8))
      switch request.operation {
      case .verify:
        say("report " + (try verifyInProcess(URL(fileURLWithPath: request.source)) { say("progress \($0) \($1)") }))
      case .salvage:
        guard let destination = request.destination else {
          throw LogToolError.badInput("salvage: no destination")
        }
        let report = try ActionLog.salvage(
          from: URL(fileURLWithPath: request.source), into: URL(fileURLWithPath: destination),
          options: request.options ?? SalvageOptions()
        ) { event in
          switch event {
          case .sourceHead(let seq): say("source-head \(seq.map(String.init) ?? "none")")
          case .committed(let seq): say("committed \(seq)")
          case .readingSnapshot(let seq): say("snapshot \(seq)")
          case .entriesDone(let reason): say("entries-done" + (reason.map { " " + $0 } ?? ""))
          }
        }
        say("report " + SalvageWire(report).json)
      }
      exit(LogTool.exitSuccess)
    } catch {
      let status = LogTool.exitStatus(for: error)
      StandardError.write("\(toolName): \(status.message)")
      exit(status.code)
    }
  }

  /// Verifies in this process; the report as one line of JSON.
  static func verifyInProcess(_ url: URL, progress: @escaping (Int, Int) -> Void) throws -> String {
    let actionLog = try ActionLog(directory: url, access: .readOnly)
    defer { try? actionLog.close() }
    let report = try actionLog.verify(progress: progress)
    return VerifyWire(path: actionLog.path, anchor: try actionLog.meta().anchor, report: report).json
  }

  /// Writes one line to standard output at once (the parent reads it even if this process dies next).
  private static func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}

// MARK: - Reports on the wire

/// A verification report as the child sends it.
struct VerifyWire: Codable {
  struct Problem: Codable {
    var kind: String
    var seq: UInt64
    var message: String
  }
  var path: String
  var anchorSeq: UInt64
  var anchorHash: [UInt8]
  var entriesChecked: Int
  var snapshotsChecked: Int
  var first: UInt64?
  var last: UInt64?
  var head: [UInt8]
  var problems: [Problem]
  var truncated: Bool

  init(path: String, anchor: ChainAnchor, report: VerificationReport) {
    self.path = path
    anchorSeq = anchor.seq
    anchorHash = anchor.hash
    entriesChecked = report.entriesChecked
    snapshotsChecked = report.snapshotsChecked
    first = report.range?.lowerBound
    last = report.range?.upperBound
    head = report.head
    problems = report.problems.map { problem in
      switch problem.location {
      case .entry(let seq): Problem(kind: "entry", seq: seq, message: problem.message)
      case .snapshot(let seq): Problem(kind: "snapshot", seq: seq, message: problem.message)
      case .meta: Problem(kind: "meta", seq: 0, message: problem.message)
      }
    }
    truncated = report.truncated
  }

  static func decode(_ json: String) throws -> VerifyWire {
    try JSONDecoder().decode(VerifyWire.self, from: Data(json.utf8))
  }

  var json: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }

  var anchor: ChainAnchor { ChainAnchor(seq: anchorSeq, hash: anchorHash) }

  var report: VerificationReport {
    var report = VerificationReport()
    report.entriesChecked = entriesChecked
    report.snapshotsChecked = snapshotsChecked
    if let first, let last, first <= last { report.range = first...last }
    report.head = head
    for problem in problems {
      let location: VerificationReport.Location =
        switch problem.kind {
        case "entry": .entry(problem.seq)
        case "snapshot": .snapshot(problem.seq)
        default: .meta
        }
      report.problems.append(VerificationReport.Problem(location: location, message: problem.message))
    }
    report.truncated = truncated
    return report
  }
}

/// A salvage report as the child sends it.
struct SalvageWire: Codable {
  struct Lost: Codable {
    var seq: UInt64
    var reason: String
  }
  var source: String
  var destination: String
  var anchorSeq: UInt64
  var anchorHash: [UInt8]
  var headSeq: UInt64
  var headHash: [UInt8]
  var entriesCopied: Int
  var sourceLastSeq: UInt64?
  var stopReason: String?
  var snapshotsCopied: [UInt64]
  var snapshotsLost: [Lost]
  var checkpointsKept: [UInt64]?
  var checkpointsDropped: [Lost]?
  var metaPageRepair: String?

  init(_ report: SalvageReport) {
    source = report.source
    destination = report.destination
    anchorSeq = report.anchor.seq
    anchorHash = report.anchor.hash
    headSeq = report.head.seq
    headHash = report.head.hash
    entriesCopied = report.entriesCopied
    sourceLastSeq = report.sourceLastSeq
    stopReason = report.stopReason
    snapshotsCopied = report.snapshotsCopied
    snapshotsLost = report.snapshotsLost.map { Lost(seq: $0.seq, reason: $0.reason) }
    checkpointsKept = report.checkpointsKept
    checkpointsDropped = report.checkpointsDropped.map { Lost(seq: $0.size, reason: $0.reason) }
    metaPageRepair = report.metaPageRepair
  }

  static func decode(_ json: String) throws -> SalvageWire {
    try JSONDecoder().decode(SalvageWire.self, from: Data(json.utf8))
  }

  var json: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }

  var report: SalvageReport {
    var report = SalvageReport(
      source: source, destination: destination, anchor: ChainAnchor(seq: anchorSeq, hash: anchorHash),
      head: ChainAnchor(seq: headSeq, hash: headHash))
    report.entriesCopied = entriesCopied
    report.sourceLastSeq = sourceLastSeq
    report.stopReason = stopReason
    report.snapshotsCopied = snapshotsCopied
    report.snapshotsLost = snapshotsLost.map { SalvageReport.LostSnapshot(seq: $0.seq, reason: $0.reason) }
    report.checkpointsKept = checkpointsKept ?? []
    report.checkpointsDropped = (checkpointsDropped ?? []).map { .init(size: $0.seq, reason: $0.reason) }
    report.metaPageRepair = metaPageRepair
    return report
  }
}
#endif  // LogTool
