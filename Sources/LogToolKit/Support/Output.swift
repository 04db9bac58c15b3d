#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import Synchronization

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
    if !Self.isClosed, !writeAll(1, buffer), errno == EPIPE {
      Self.readerWentAway.store(true, ordering: .relaxed)
    }
    buffer.removeAll(keepingCapacity: true)
  }
}

/// Unbuffered writing to standard error.
enum StandardError {
  /// Writes `text` and, unless it ends with one, a newline.
  static func write(_ text: String) {
    writeAll(2, Array((text.hasSuffix("\n") ? text : text + "\n").utf8))
  }

  /// Writes `text` as is.
  static func raw(_ text: String) { writeAll(2, Array(text.utf8)) }
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
