import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
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
      let child = try ChildProcess("chronicle-probe", ["store-send", dir.url.path, "1000000", durability, "\(batch)"])
      let ready = try #require(child.readLine())
      #expect(ready == "ready \(acknowledged)", "iteration \(iteration): the reopened log holds every acknowledged entry")
      // Let it send for a random while, then kill it mid-stream.
      let deadline = Date().addingTimeInterval(Double.random(in: 0.02...0.15))
      while let line = child.readLine(before: deadline) {
        acknowledged = try #require(UInt64(line))
      }
      child.kill()
      while let line = child.readLine() { acknowledged = try #require(UInt64(line)) }
      #expect(child.process.terminationReason == .uncaughtSignal)

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

  /// As above, with several threads or tasks sending at once, so that the kill lands during group
  /// commits: every sequence number any sender was told is in the reopened log.
  @Test(arguments: [("full", "sync"), ("full", "async"), ("normal", "sync")])
  func killedConcurrentSendersLoseNothingAcknowledged(durability: String, mode: String) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var acknowledged: UInt64 = 0
    for iteration in 0..<Self.iterations {
      let child = try ChildProcess("chronicle-probe", ["store-send-concurrent", dir.url.path, "8", durability, mode])
      let ready = try #require(child.readLine())
      #expect(ready == "ready \(acknowledged)", "iteration \(iteration): the reopened log holds every acknowledged entry")
      let before = acknowledged
      // The kill lands a random while after the first acknowledgement: a slow first sync (a busy
      // disk) must not let it land before any commit.
      if let line = child.readLine() { acknowledged = max(acknowledged, try #require(UInt64(line))) }
      let deadline = Date().addingTimeInterval(Double.random(in: 0.05...0.2))
      while let line = child.readLine(before: deadline) { acknowledged = max(acknowledged, try #require(UInt64(line))) }
      child.kill()
      while let line = child.readLine() { acknowledged = max(acknowledged, try #require(UInt64(line))) }
      #expect(child.process.terminationReason == .uncaughtSignal)
      #expect(acknowledged > before, "iteration \(iteration): the senders committed something")

      let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
      #expect(store.lastSeq >= acknowledged, "iteration \(iteration): acknowledged \(acknowledged), found \(store.lastSeq)")
      #expect(store.state.count == Int(store.lastSeq), "state equals the fold of the log")
      acknowledged = store.lastSeq
      let report = try ActionLog(directory: dir.url, access: .readOnly).verify()
      #expect(report.isValid, "\(report.problems)")
      try store.close()
    }
  }
}
