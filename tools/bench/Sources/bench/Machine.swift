import Foundation

/// The machine a run happened on, for the report.
struct Machine: Sendable {
  var processors: String
  var cpu: String
  var memory: String
  var swift: String
  var kernel: String
  var fileSystem: String
  var date: String
  var loadAtStart: String
  var loadAtEnd = ""

  init(scratch: URL) {
    processors = (command(["nproc"]) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    if processors.isEmpty { processors = "\(ProcessInfo.processInfo.activeProcessorCount)" }
    cpu = Self.procField("/proc/cpuinfo", "model name") ?? "unknown"
    if let kib = Self.procField("/proc/meminfo", "MemTotal").flatMap({ Int($0.split(separator: " ").first ?? "") }) {
      memory = String(format: "%.1f GiB", Double(kib) / 1_048_576)
    } else {
      memory = "unknown"
    }
    swift = command(["swift", "--version"])?.split(separator: "\n").first.map(String.init) ?? "unknown"
    kernel = (command(["uname", "-sr"]) ?? "unknown").trimmingCharacters(in: .whitespacesAndNewlines)
    fileSystem = Self.fileSystem(of: scratch)
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    date = formatter.string(from: Date())
    loadAtStart = Self.load()
  }

  /// The 1, 5 and 15 minute load averages (other work on the machine shows here).
  static func load() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).joined(separator: " ")
  }

  private static func procField(_ path: String, _ name: String) -> String? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(name) {
      guard let colon = line.firstIndex(of: ":") else { continue }
      return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return nil
  }

  /// The type of the file system holding `url` (from /proc/mounts, the longest matching mount point).
  private static func fileSystem(of url: URL) -> String {
    guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
    let path = url.resolvingSymlinksInPath().path
    var best: (point: String, type: String)?
    for line in mounts.split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count >= 3 else { continue }
      let point = String(fields[1])
      let matches = point == "/" || path == point || path.hasPrefix(point + "/")
      if matches, point.count > (best?.point.count ?? -1) { best = (point, String(fields[2])) }
    }
    return best?.type ?? "unknown"
  }
}

/// Runs a command found on the PATH and returns its standard output, or `nil` if it fails.
func command(_ arguments: [String], input: Data? = nil) -> String? {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = arguments
  let output = Pipe()
  process.standardOutput = output
  process.standardError = FileHandle.nullDevice
  let inputPipe = input.map { _ in Pipe() }
  if let inputPipe { process.standardInput = inputPipe }
  do { try process.run() } catch { return nil }
  if let input, let inputPipe {
    // Feed the input from another thread so a large output cannot deadlock against it.
    let handle = inputPipe.fileHandleForWriting
    Thread.detachNewThread {
      handle.write(input)
      try? handle.close()
    }
  }
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else { return nil }
  return String(decoding: data, as: UTF8.self)
}
