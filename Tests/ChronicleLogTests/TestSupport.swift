import ChronicleLog
import Foundation

/// A fresh directory under the system's temporary directory.
struct TemporaryDirectory {
  let url: URL
  var path: String { url.path }

  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("chronicle-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// A path inside it that does not exist yet.
  func child(_ name: String) -> URL { url.appendingPathComponent(name) }

  func remove() {
    // Restore permissions a test may have removed, so cleanup always works.
    _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
    try? FileManager.default.removeItem(at: url)
  }
}

/// A child process running the test helper `chronicle-probe`.
final class Probe {
  let process = Process()
  private let output = Pipe()
  private let input = Pipe()
  private var buffer: [UInt8] = []

  static var executable: URL {
    Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("chronicle-probe")
  }

  init(_ arguments: [String]) throws {
    process.executableURL = Self.executable
    process.arguments = arguments
    process.standardOutput = output
    process.standardInput = input
    process.standardError = FileHandle.standardError
    try process.run()
  }

  /// The next line the child printed, or `nil` at end of output.
  func readLine() -> String? {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty {
        guard !buffer.isEmpty else { return nil }
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
      }
      buffer.append(contentsOf: chunk)
    }
  }

  /// Closes the child's standard input.
  func closeInput() { try? input.fileHandleForWriting.close() }

  /// Waits for the child and returns its exit status.
  @discardableResult
  func wait() -> Int32 {
    closeInput()
    process.waitUntilExit()
    return process.terminationStatus
  }
}

/// A nested Codable value exercising every shape the codecs must carry.
struct Sample: Codable, Hashable, Sendable {
  enum Kind: Codable, Hashable, Sendable {
    case plain
    case amount(Int64, currency: String)
    case nested(inner: [String: [Int]])
  }
  var id: UUID
  var when: Date
  var name: String
  var note: String?
  var kinds: [Kind]
  var blob: Data
  var ratio: Double
  var small: Float
  var flags: [String: Bool]

  static func make(_ n: Int) -> Sample {
    Sample(
      id: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!,
      when: Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 0.25),
      name: "sample \(n) ✓", note: n % 3 == 0 ? nil : "note \(n)",
      kinds: [.plain, .amount(Int64(n) * -100, currency: "EUR"), .nested(inner: ["a": [n, n + 1]])],
      blob: Data((0..<UInt8(n % 32)).map { $0 }), ratio: Double(n) / 7, small: Float(n) * 0.5,
      flags: ["even": n % 2 == 0])
  }
}
