#if LogTool
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Buffered writing to standard output with `write(2)`: fast for a million lines,
/// and flushed on demand so that `tail --follow` shows each entry at once.
///
/// When the reader of standard output goes away (`logtool list LOG | head -1`), the
/// write fails with `EPIPE` (`LogTool.main` ignores `SIGPIPE`): the output is marked
/// closed, later output is dropped, commands stop early, and the process exits 0.
struct StandardOutput {
  private var buffer: [UInt8] = []

  init() { buffer.reserveCapacity(1 << 16) }

  /// Set for good once a write to standard output failed with `EPIPE`: nobody reads it any more.
  static let readerWentAway = Atomic<Bool>(false)

  /// Whether the reader of standard output went away (`EPIPE`).
  static var isClosed: Bool { readerWentAway.load(ordering: .relaxed) }

  /// Whether the reader of standard output went away: stop producing output.
  var isClosed: Bool { Self.isClosed }

  /// Appends `text` and a newline.
  mutating func line(_ text: String = "") {
    buffer.append(contentsOf: text.utf8)
    buffer.append(UInt8(ascii: "\n"))
    if buffer.count >= 1 << 16 { flush() }
  }

  /// Appends raw bytes.
  mutating func write(_ bytes: [UInt8]) {
    buffer.append(contentsOf: bytes)
    if buffer.count >= 1 << 16 { flush() }
  }

  /// Writes everything buffered.
  mutating func flush() {
    if let capture = OutputCapture.current {
      capture.append(buffer, error: false)
    } else if !Self.isClosed, !writeAll(1, buffer), errno == EPIPE {
      Self.readerWentAway.store(true, ordering: .relaxed)
    }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Writes `text` and, unless it ends with one, a newline, at once.
  static func print(_ text: String) {
    var out = StandardOutput()
    out.write(Array((text.hasSuffix("\n") ? text : text + "\n").utf8))
    out.flush()
  }
}

/// Where the commands' standard output and error go instead of the process's, for the
/// commands run in process by tests: set ``current`` with `OutputCapture.$current.withValue`.
package final class OutputCapture: Sendable {
  /// The capture of the running task, if any.
  @TaskLocal package static var current: OutputCapture?

  private let state = Mutex<(out: [UInt8], error: [UInt8])>(([], []))

  /// An empty capture.
  package init() {}

  /// What was written to standard output.
  package var standardOutput: String { state.withLock { String(decoding: $0.out, as: UTF8.self) } }
  /// What was written to standard error.
  package var standardError: String { state.withLock { String(decoding: $0.error, as: UTF8.self) } }

  func append(_ bytes: [UInt8], error: Bool) {
    state.withLock { state in
      if error { state.error.append(contentsOf: bytes) } else { state.out.append(contentsOf: bytes) }
    }
  }
}

/// Unbuffered writing to standard error.
enum StandardError {
  /// Writes `text` and, unless it ends with one, a newline.
  static func write(_ text: String) {
    raw(text.hasSuffix("\n") ? text : text + "\n")
  }

  /// Writes `text` as is.
  static func raw(_ text: String) {
    if let capture = OutputCapture.current {
      capture.append(Array(text.utf8), error: true)
    } else {
      writeAll(2, Array(text.utf8))
    }
  }
}

/// Writes all of `bytes` to `descriptor`, retrying after signals and short writes; returns
/// `false` (with `errno` set) if a write failed.
@discardableResult
private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
  bytes.withUnsafeBytes { buffer in
    var offset = 0
    while offset < buffer.count {
      let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return false
      }
      offset += written
    }
    return true
  }
}
#endif  // LogTool
