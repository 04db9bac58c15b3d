import Foundation
import Synchronization

// MARK: - Time

/// Seconds taken by `body`.
func seconds(_ body: () throws -> Void) rethrows -> Double {
  let start = ContinuousClock.now
  try body()
  return (ContinuousClock.now - start).seconds
}

extension Duration {
  /// The duration in seconds.
  var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}

/// The code a profile looks at: `valgrind --toggle-collect` counts only what runs inside it.
@inline(never)
func measuredSection<R>(_ body: () throws -> R) rethrows -> R {
  try body()
}

// MARK: - Statistics

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
  guard !values.isEmpty else { return .nan }
  let sorted = values.sorted()
  let middle = sorted.count / 2
  return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The nearest-rank percentile `p` (0…100) of `values`.
func percentile(_ values: [Double], _ p: Double) -> Double {
  guard !values.isEmpty else { return .nan }
  let sorted = values.sorted()
  let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
  return sorted[min(max(rank, 1), sorted.count) - 1]
}

// MARK: - Memory

/// Fields of `/proc/self/status`, in bytes.
enum ProcessMemory {
  /// `VmHWM`: the peak resident set size, including mapped file pages (LMDB's map).
  static var peakResident: Int { field("VmHWM") }
  /// `RssAnon`: resident anonymous memory (heap, stacks): what the process allocated.
  static var residentAnonymous: Int { field("RssAnon") }
  /// `RssFile`: resident file-backed pages (the binary, libraries, LMDB's map).
  static var residentFile: Int { field("RssFile") }

  private static func field(_ name: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
      let number = line.dropFirst(name.count + 1).split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 0
      return number * 1024
    }
    return 0
  }
}

/// Samples `RssAnon` on a background thread until stopped, keeping the peak:
/// the kernel records a high-water mark for the whole resident set only.
final class AnonymousMemorySampler: Sendable {
  private let peak = Mutex(0)
  private let running = Atomic(true)
  private let finished = Atomic(false)

  init(interval: Duration = .milliseconds(2)) {
    peak.withLock { $0 = ProcessMemory.residentAnonymous }
    let micros = UInt32(interval.seconds * 1e6)
    Thread.detachNewThread { [self] in
      while running.load(ordering: .acquiring) {
        let current = ProcessMemory.residentAnonymous
        peak.withLock { $0 = max($0, current) }
        usleep(micros)
      }
      finished.store(true, ordering: .releasing)
    }
  }

  /// Stops sampling and returns the peak seen, including a last sample taken now.
  func stop() -> Int {
    let current = ProcessMemory.residentAnonymous
    running.store(false, ordering: .releasing)
    while !finished.load(ordering: .acquiring) { usleep(100) }
    return peak.withLock { max($0, current) }
  }
}

// MARK: - Files

/// The size in bytes of the file at `path` (0 if it does not exist).
func fileSize(_ path: String) -> Int {
  var info = stat()
  guard stat(path, &info) == 0 else { return 0 }
  return Int(info.st_size)
}

/// A scratch directory for one system's files in one run, deleted by ``remove()``.
struct Scratch {
  let url: URL
  var path: String { url.path }

  init(root: URL, name: String) throws {
    url = root.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// A path inside the directory.
  func file(_ name: String) -> String { url.appendingPathComponent(name).path }

  func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Runs `body` with a new directory `chronicle-bench-PID-NAME` under `scratchRoot` (the
/// configuration's), removed afterwards: the logs of one run or one command.
func withBenchRoot<R>(_ scratchRoot: URL, _ name: String, _ body: (URL) throws -> R) throws -> R {
  let root = scratchRoot.appendingPathComponent("chronicle-bench-\(getpid())-\(name)", isDirectory: true)
  try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: root) }
  return try body(root)
}

/// An error of the benchmark itself.
struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
