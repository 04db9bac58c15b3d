import Foundation

/// Reads a file line by line (split at `\n`) in large chunks.
struct LineReader {
  /// The longest line read: beyond it the file is refused (an endless line, `/dev/zero`, is no export).
  /// An export's longest lines carry a snapshot's state in base64, a third larger than the state.
  static let maxLineLength = 512 << 20

  let path: String
  private let handle: FileHandle
  private var buffer: [UInt8] = []
  private var start = 0
  private var atEnd = false
  private(set) var bytesRead = 0

  init(path: String) throws {
    self.path = path
    guard FileManager.default.fileExists(atPath: path) else {
      throw LogError.io(path: path, operation: "read", reason: "no such file")
    }
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw LogError.io(path: path, operation: "read", reason: "permission denied")
    }
    self.handle = handle
  }

  /// The next line without its newline, or `nil` at the end.
  mutating func next() throws -> ArraySlice<UInt8>? {
    // Where the search for the newline goes on: the bytes before it were searched already.
    var searched = start
    while true {
      if let newline = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
        defer { start = newline + 1 }
        return buffer[start..<newline]
      }
      searched = buffer.count
      guard buffer.count - start <= Self.maxLineLength else {
        throw LogError.invalidExport(
          path: path, line: 0, seq: nil,
          reason: "a line longer than \(Self.maxLineLength >> 20) MiB after \(bytesRead - (buffer.count - start)) bytes: "
            + "not a Chronicle export")
      }
      if atEnd {
        guard start < buffer.count else { return nil }
        defer { start = buffer.count }
        return buffer[start...]
      }
      searched -= start
      buffer.removeSubrange(..<start)
      start = 0
      let chunk: Data?
      do { chunk = try handle.read(upToCount: 1 << 20) } catch {
        throw LogError.io(path: path, operation: "read", reason: error.localizedDescription)
      }
      if let chunk, !chunk.isEmpty {
        buffer.append(contentsOf: chunk)
        bytesRead += chunk.count
      } else {
        atEnd = true
      }
    }
  }
}
