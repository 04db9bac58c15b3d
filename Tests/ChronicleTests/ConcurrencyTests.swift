import Chronicle
import ChronicleTestSupport
import Dispatch
import Foundation
import ChronicleTestTools
import Testing

/// Runs `body(index)` on `count` threads of its own (not the cooperative pool, which has as
/// few threads as cores: blocking readers there could starve the senders) and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let group = DispatchGroup()
  for index in 0..<count {
    group.enter()
    Thread {
      body(index)
      group.leave()
    }.start()
  }
  group.wait()
}

/// Concurrent senders and readers: nothing lost, duplicated or reordered.
@Suite struct ConcurrencyTests {
  /// Threads send (single actions and batches) while in-process readers and a reader process walk
  /// the log. Every reader pass sees a gapless prefix 1…n that never shrinks; at the end, each
  /// sender's actions are in the log exactly once, in the order it sent them, at the seqs it was told.
  @Test func sendersAndReadersInThisProcessAndAnother() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let senders = 6
    let perSender = ReliabilityRun.isHeavy ? 5_000 : 400
    let total = senders * perSender
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url),
      options: StoreOptions(snapshotEvery: 64))
    let watcher = try ChildProcess("chronicle-log-probe", ["watch-verify", dir.url.path, "\(total)"])

    let sent = Recorder<(seq: UInt64, code: Int)>()
    let problems = Recorder<String>()
    let passes = Recorder<Int>()
    onThreads(senders + 2) { index in
      if index >= senders {
        // A reader: walk everything again and again until all is there.
        do {
          let log = try ActionLog(directory: dir.url, access: .readOnly)
          defer { try? log.close() }
          var last: UInt64 = 0
          var count = 0
          let deadline = Date().addingTimeInterval(600)
          while last < UInt64(total), Date() < deadline {
            var expected: UInt64 = 1
            try log.forEach { record in
              if record.seq != expected { problems.append("reader \(index): \(record.seq) where \(expected) belongs") }
              if record.seq > last, (try? record.codec.decode(Counter.Action.self, from: record.payload)) == nil {
                problems.append("reader \(index): entry \(record.seq) does not decode")
              }
              expected = record.seq + 1
            }
            if expected - 1 < last { problems.append("reader \(index): the log shrank from \(last) to \(expected - 1)") }
            last = expected - 1
            count += 1
            Thread.sleep(forTimeInterval: 0.001)  // leave the senders some of a small machine's cores
          }
          if last != UInt64(total) { problems.append("reader \(index): saw \(last) of \(total) entries") }
          passes.append(count)
        } catch {
          problems.append("reader \(index): \(error)")
        }
        return
      }
      // A sender: codes sender * 1_000_000 + n, in increasing n; every fifth send is a batch of three.
      var n = 0
      while n < perSender {
        do {
          if n % 5 == 4, n + 3 <= perSender {
            let codes = (n..<(n + 3)).map { index * 1_000_000 + $0 }
            let range = try store.send(contentsOf: codes.map { Counter.Action.set($0) })
            for (seq, code) in zip(range, codes) { sent.append((seq, code)) }
            n += 3
          } else {
            let code = index * 1_000_000 + n
            sent.append((try store.send(.set(code), metadata: ["sender": "\(index)"]), code))
            n += 1
          }
        } catch {
          problems.append("sender \(index): \(error)")
          return
        }
      }
    }
    #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
    let history = try store.history
    #expect(history.map(\.seq) == Array(1...UInt64(total)))
    let logged = history.map { entry -> Int in
      guard case .set(let code)? = entry.action else { return -1 }
      return code
    }
    #expect(Set(logged).count == total, "no action lost or duplicated")
    for (seq, code) in sent.values { #expect(logged[Int(seq) - 1] == code, "seq \(seq) holds what its sender was told") }
    for sender in 0..<senders {
      let mine = logged.filter { $0 / 1_000_000 == sender }
      #expect(mine == mine.sorted(), "sender \(sender)'s actions are in the order it sent them")
      #expect(mine.count == perSender)
    }
    #expect(store.state.count == logged.last)
    try store.close()

    let line = watcher.readLine(timeout: 600) ?? ""
    #expect(watcher.wait(timeout: 600) == 0, "\(line)")
    #expect(line.hasPrefix("passes ") && line.hasSuffix(" last \(total)"), "\(line)")
    #expect(try verifyLog(dir.url).isValid)
    print("concurrency: \(total) sends by \(senders) threads; in-process reader passes \(passes.values); reader process: \(line)")
  }

  /// Many tasks send at once; commit observers see every commit once, in seq order, each state one step on.
  @Test func manyTasksSendAndObserversSeeEveryCommitInOrder() async throws {
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), options: StoreOptions(snapshotEvery: 100))
    let commits = Recorder<(UInt64, Int, Int)>()
    let token = store.observeCommits { commit in commits.append((commit.seq, commit.old.count, commit.new.count)) }
    let tasks = 32
    let perTask = ReliabilityRun.isHeavy ? 2_000 : 100
    let seqs = try await withThrowingTaskGroup(of: [UInt64].self) { group in
      for _ in 0..<tasks {
        group.addTask {
          var mine: [UInt64] = []
          for n in 0..<perTask {
            if n % 10 == 9 {
              await mine += Array(try store.send(contentsOf: [.increment, .increment]))
            } else {
              await mine.append(try store.send(.increment))
            }
            if n % 16 == 0 { await Task.yield() }
          }
          return mine
        }
      }
      return try await group.reduce(into: [UInt64]()) { $0 += $1 }
    }
    let total = tasks * (perTask + perTask / 10)
    #expect(seqs.sorted() == Array(1...UInt64(total)))
    #expect(store.state.count == total)
    let seen = commits.values
    #expect(seen.map(\.0) == Array(1...UInt64(total)), "observers see each commit once, in seq order")
    #expect(seen.allSatisfy { $0.2 == $0.1 + 1 && $0.2 == Int($0.0) }, "each published state is one step on")
    token.cancel()
    try store.close()
  }
}
