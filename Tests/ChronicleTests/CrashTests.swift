import Chronicle
import Foundation
import Testing

/// A real child process sends while the parent kills it with SIGKILL at random moments.
@Suite struct CrashTests {
  /// Iterations per mode; set CHRONICLE_CRASH_ITERATIONS for a longer run.
  static let iterations = Int(ProcessInfo.processInfo.environment["CHRONICLE_CRASH_ITERATIONS"] ?? "") ?? 6

  @Test(arguments: [("normal", 1), ("full", 1), ("normal", 25)])
  func killedWritersLoseNothingAcknowledged(durability: String, batch: Int) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var acknowledged: UInt64 = 0
    for iteration in 0..<Self.iterations {
      let child = Process()
      child.executableURL = probeURL()
      child.arguments = ["store-send", dir.url.path, "1000000", durability, "\(batch)"]
      let output = Pipe()
      child.standardOutput = output
      try child.run()
      let reader = LineReader(output.fileHandleForReading)
      let ready = try #require(reader.next())
      #expect(ready == "ready \(acknowledged)", "iteration \(iteration): the reopened log holds every acknowledged entry")
      // Let it send for a random while, then kill it mid-stream.
      let deadline = Date().addingTimeInterval(Double.random(in: 0.02...0.15))
      while Date() < deadline, let line = reader.next() {
        acknowledged = try #require(UInt64(line))
      }
      kill(child.processIdentifier, SIGKILL)
      child.waitUntilExit()
      while let line = reader.next() { acknowledged = try #require(UInt64(line)) }
      #expect(child.terminationReason == .uncaughtSignal)

      let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
      #expect(store.lastSeq >= acknowledged, "iteration \(iteration): acknowledged \(acknowledged), found \(store.lastSeq)")
      #expect(store.state.count == Int(store.lastSeq), "state equals the fold of the log")
      acknowledged = store.lastSeq
      let report = try ActionLog(directory: dir.url, access: .readOnly).verify()
      #expect(report.isValid, "\(report.problems)")
      try store.close()
    }
    #expect(acknowledged > 0)
  }
}

/// Reads lines from a pipe.
final class LineReader {
  private let handle: FileHandle
  private var buffer: [UInt8] = []
  init(_ handle: FileHandle) { self.handle = handle }

  func next() -> String? {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        defer { buffer.removeSubrange(...newline) }
        return String(decoding: buffer[..<newline], as: UTF8.self)
      }
      let chunk = handle.availableData
      if chunk.isEmpty { return nil }
      buffer.append(contentsOf: chunk)
    }
  }
}
