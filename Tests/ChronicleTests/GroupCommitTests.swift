@testable import Chronicle
import ChronicleTestSupport
import Dispatch
import Foundation
import ChronicleTestTools
import Testing

/// The action sender `sender` sends as its `index`th: a value that names both.
private func code(sender: Int, index: Int) -> Int { sender * 100_000 + index }

/// The count value a validator of these tests refuses.
private func isRefused(_ value: Int) -> Bool { value % 100 == 13 }

/// A counter store in `dir`: `.full` and no periodic snapshots unless told otherwise.
private func counterStore(
  _ dir: TemporaryDirectory, durability: Durability = .full, snapshotEvery: Int = 0,
  validators: [Validator<Counter.State>] = []
) throws -> Store<Counter.State, Counter.Action> {
  try Store(
    initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url),
    options: StoreOptions(durability: durability, snapshotEvery: snapshotEvery), validators: validators)
}

/// Reads every entry of `directory`'s log: its sequence number, the value it sets, its timestamp.
private func readEntries(_ directory: URL) throws -> [(seq: UInt64, value: Int, timestamp: Int64)] {
  let log = try ActionLog(directory: directory, access: .readOnly)
  defer { try? log.close() }
  var entries: [(seq: UInt64, value: Int, timestamp: Int64)] = []
  try log.forEach { entry in
    guard case .set(let value) = try entry.codec.decode(Counter.Action.self, from: entry.payload) else {
      Issue.record("entry \(entry.seq) is not a set")
      return
    }
    entries.append((entry.seq, value, entry.timestamp))
  }
  return entries
}

/// Group commit with `.full` durability: concurrent senders share transactions and syncs, and every
/// promise of `send` holds for each of them.
/// Holds a store's commit lock on a thread of its own, as a long sync would, from its creation
/// until ``release()``; records whether the others progressed meanwhile (it gives up after 20 s,
/// so a failing run ends).
private final class CommitLockHolder: Sendable {
  private let released = DispatchSemaphore(value: 0)
  private let progressed = Recorder<Bool>()

  init<State, Action>(_ store: Store<State, Action>) {
    let held = DispatchSemaphore(value: 0)
    let released = released
    let progressed = progressed
    Thread {
      store.commitLock.withLock { _ in
        held.signal()
        progressed.append(released.wait(timeout: .now() + 20) == .success)
      }
    }.start()
    held.wait()
  }

  /// Lets the holder's thread give the lock back.
  func release() { released.signal() }

  /// `[true]` once released if it was released before the holder gave up.
  var othersProgressed: [Bool] { progressed.values }
}

@Suite struct GroupCommitTests {
  static let senders = 8
  static let perSender = 60

  /// Eight threads send `.full` at once: the entries get gapless sequence numbers; each sender is told
  /// the sequence number of its own action; each sender's actions are in the order it sent them; and
  /// senders share commits (entries of one transaction share its timestamp, which one sync per
  /// action never gives).
  @Test func concurrentSendersShareCommitsAndKeepEveryPromise() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try counterStore(dir)
    let told = Recorder<(seq: UInt64, value: Int)>()
    onThreads(Self.senders) { sender in
      for index in 0..<Self.perSender {
        let value = code(sender: sender, index: index)
        do { told.append((try store.send(.set(value)), value)) } catch { Issue.record("\(error)") }
      }
    }
    try store.close()

    let entries = try readEntries(dir.url)
    expectEveryPromiseKept(entries, told: told.values)
    let total = Self.senders * Self.perSender
    let commits = Set(entries.map(\.timestamp)).count
    #expect(commits < total, "\(total) actions took \(commits) commits")
  }

  /// A validator refuses some actions while eight threads send, with `.full` (group commits) and
  /// with `.normal` (most sends find the writer busy and are queued for the thread that leads the
  /// commits): each refused send throws `.rejected` alone and its neighbours are committed;
  /// sequence numbers are gapless, each sender is told its own, each sender's actions keep its
  /// order, and the state is the fold of the log (each validator call saw its own action's state).
  @Test(arguments: [Durability.full, .normal])
  func concurrentSendersKeepEveryPromise(durability: Durability) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try counterStore(
      dir, durability: durability, snapshotEvery: durability == .full ? 0 : 50,
      validators: [Validator("no count ending in 13") { !isRefused($0.count) }])
    let told = Recorder<(seq: UInt64, value: Int)>()
    let rejected = Recorder<Int>()
    let perSender = durability == .full ? Self.perSender : Self.perSender * 5
    onThreads(Self.senders) { sender in
      for index in 0..<perSender {
        let value = code(sender: sender, index: index)
        do {
          told.append((try store.send(.set(value)), value))
        } catch ChronicleError.rejected {
          rejected.append(value)
        } catch {
          Issue.record("\(value): \(error)")
        }
      }
    }
    let last = store.state.count
    try store.close()

    let all = (0..<Self.senders).flatMap { sender in (0..<perSender).map { code(sender: sender, index: $0) } }
    #expect(Set(rejected.values) == Set(all.filter(isRefused)), "exactly the refused values failed")
    let entries = try readEntries(dir.url)
    #expect(entries.map(\.seq) == Array(1...UInt64(all.count - rejected.values.count)), "gapless sequence numbers")
    #expect(Set(entries.map(\.value)) == Set(all.filter { !isRefused($0) }), "every other value was committed")
    let valueAt = Dictionary(uniqueKeysWithValues: entries.map { ($0.seq, $0.value) })
    for (seq, value) in told.values { #expect(valueAt[seq] == value, "the sender of \(value) was told \(seq)") }
    #expect(told.values.count == entries.count)
    for sender in 0..<Self.senders {
      let mine = entries.filter { $0.value / 100_000 == sender }.map(\.value)
      #expect(mine == all.filter { $0 / 100_000 == sender && !isRefused($0) }, "sender \(sender)'s order")
    }
    #expect(last == entries.last?.value, "the state is the fold of the log")
  }

  /// `close()` while eight threads send (queued for the thread that leads the commits): every send
  /// returns a sequence number the log holds or throws `.closed`; none is left waiting for a leader
  /// that stopped, none is lost.
  @Test(arguments: [Durability.full, .normal])
  func closingWhileSendersWaitLosesNothing(durability: Durability) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try counterStore(dir, durability: durability)
    let told = Recorder<(seq: UInt64, value: Int)>()
    let closedSends = Recorder<Int>()
    let started = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    Thread {
      onThreads(Self.senders) { sender in
        if sender == 0 { started.signal() }
        for index in 0..<10_000 {
          let value = code(sender: sender, index: index)
          do {
            told.append((try store.send(.set(value)), value))
          } catch ChronicleError.closed {
            closedSends.append(value)
            return
          } catch {
            Issue.record("\(value): \(error)")
            return
          }
        }
      }
      finished.signal()
    }.start()
    started.wait()
    let deadline = Date() + 30
    while store.lastSeq < 200, Date() < deadline { usleep(200) }
    try store.close()
    #expect(finished.wait(timeout: .now() + 30) == .success, "every sender returned after close()")

    let entries = try readEntries(dir.url)
    #expect(entries.map(\.seq) == Array(1...UInt64(entries.count)))
    #expect(told.values.count == entries.count, "every committed send was told its sequence number")
    let valueAt = Dictionary(uniqueKeysWithValues: entries.map { ($0.seq, $0.value) })
    for (seq, value) in told.values { #expect(valueAt[seq] == value, "the sender of \(value) was told \(seq)") }
    #expect(Set(closedSends.values).isDisjoint(with: Set(entries.map(\.value))), "no refused send was logged")
  }

  /// Async senders in many tasks: gapless sequence numbers, each told its own, the state the fold of the log.
  @Test func asyncSendersKeepEveryPromise() async throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try counterStore(dir, snapshotEvery: 25)
    let told = try await withThrowingTaskGroup(of: [(UInt64, Int)].self) { group in
      for sender in 0..<Self.senders {
        group.addTask {
          var told: [(UInt64, Int)] = []
          for index in 0..<Self.perSender {
            let value = code(sender: sender, index: index)
            if index % 10 == 9 {
              let range = try await store.send(contentsOf: [.set(value - 1), .set(value)])
              told.append((range.upperBound, value))
            } else {
              told.append((try await store.send(.set(value)), value))
            }
          }
          return told
        }
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    #expect(store.state.count == (try readEntries(dir.url)).last?.value)
    try store.close()
    let entries = try readEntries(dir.url)
    #expect(entries.map(\.seq) == Array(1...UInt64(entries.count)))
    #expect(entries.count == Self.senders * Self.perSender * 11 / 10)
    let valueAt = Dictionary(uniqueKeysWithValues: entries.map { ($0.seq, $0.value) })
    for (seq, value) in told { #expect(valueAt[seq] == value, "the sender of \(value) was told \(seq)") }
  }

  /// Four threads send `.full` with `send` and four tasks with `try await send`, at once: they share
  /// one queue, so the lead of the commits passes between threads and the store's own thread for
  /// async sends. Every sender returns (none waits for a lead handed to nobody); gapless sequence
  /// numbers, each sender told its own, each sender's order kept.
  @Test func threadsAndTasksShareCommits() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try counterStore(dir)
    let told = Recorder<(seq: UInt64, value: Int)>()
    let finished = DispatchGroup()
    for sender in 0..<Self.senders {
      finished.enter()
      if sender % 2 == 0 {
        Thread {
          for index in 0..<Self.perSender {
            let value = code(sender: sender, index: index)
            do { told.append((try store.send(.set(value)), value)) } catch { Issue.record("\(value): \(error)") }
          }
          finished.leave()
        }.start()
      } else {
        Task {
          for index in 0..<Self.perSender {
            let value = code(sender: sender, index: index)
            do { told.append((try await store.send(.set(value)), value)) } catch { Issue.record("\(value): \(error)") }
          }
          finished.leave()
        }
      }
    }
    #expect(finished.wait(timeout: .now() + 60) == .success, "every sender returned")
    try store.close()

    expectEveryPromiseKept(try readEntries(dir.url), told: told.values)
  }

  /// Every sender's ``perSender`` actions are in the log once each, in the order it sent them, under
  /// gapless sequence numbers, and each sender was told the sequence number of each of its actions.
  func expectEveryPromiseKept(
    _ entries: [(seq: UInt64, value: Int, timestamp: Int64)], told: [(seq: UInt64, value: Int)]
  ) {
    let total = Self.senders * Self.perSender
    #expect(entries.map(\.seq) == Array(1...UInt64(total)), "gapless sequence numbers")
    let valueAt = Dictionary(uniqueKeysWithValues: entries.map { ($0.seq, $0.value) })
    for (seq, value) in told { #expect(valueAt[seq] == value, "the sender of \(value) was told \(seq)") }
    #expect(told.count == total, "every send was told its sequence number")
    for sender in 0..<Self.senders {
      let mine = entries.filter { $0.value / 100_000 == sender }.map(\.value)
      #expect(mine == (0..<Self.perSender).map { code(sender: sender, index: $0) }, "sender \(sender)'s order")
    }
  }

  /// While a `.full` commit cannot finish (the commit lock is held, as during a long sync), async
  /// sends from more tasks than the cooperative pool has threads suspend without holding a thread:
  /// other tasks still run to completion. A send that blocked its thread would starve them until
  /// the commit finished.
  @Test func asyncSendsLeaveTheCooperativePoolFree() async throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try counterStore(dir)
    let sends = ProcessInfo.processInfo.activeProcessorCount * 4
    let holder = CommitLockHolder(store)
    let senders = (0..<sends).map { index in Task { try await store.send(.set(index + 1)) } }
    // More small tasks than the pool has threads; each must run while the commit is stuck.
    let finished = await withTaskGroup(of: Int.self) { group in
      for index in 0..<(sends * 4) { group.addTask { await Task.yield(); return index } }
      return await group.reduce(0) { count, _ in count + 1 }
    }
    #expect(store.lastSeq == 0, "nothing was committed while the commit lock was held")
    holder.release()
    var seqs: [UInt64] = []
    for sender in senders { seqs.append(try await sender.value) }
    #expect(finished == sends * 4)
    #expect(holder.othersProgressed == [true], "other tasks finished while the commit was stuck")
    #expect(seqs.sorted() == Array(1...UInt64(sends)))
    try store.close()
  }
}

// MARK: - Scoped stores

/// A root whose state holds a counter, for the scoped store's async send.
private struct Holder: Reducer {
  struct State: Codable, Sendable, Equatable { var counter = Counter.State() }
  enum Action: Codable, Sendable, Equatable { case counter(Counter.Action) }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .counter(let action): Counter().reduce(into: &state.counter, action: action).map(Action.counter)
    }
  }
}

/// `try await scoped.send(_:)` keeps the root store's promises: it suspends instead of blocking while
/// a `.full` commit cannot finish, each sender is told its own sequence number, the root log holds
/// the wrapped actions, and a rejection fails that send alone.
@Suite struct ScopedAsyncSendTests {
  @Test func scopedAsyncSendsSuspendAndLandInTheRootLog() async throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(
      initialState: Holder.State(), reducer: Holder(), log: .directory(dir.url),
      options: StoreOptions(durability: .full, snapshotEvery: 0),
      validators: [Validator("no count ending in 13") { !isRefused($0.counter.count) }])
    let counter = store.scope(state: \.counter, action: Holder.Action.counter)
    let count = counter.scope(state: \.count, action: { (value: Int) in Counter.Action.set(value) })
    let sends = ProcessInfo.processInfo.activeProcessorCount * 4
    let holder = CommitLockHolder(store)
    // Half through the scoped store, half through its own scope (two levels down).
    let senders = (0..<sends).map { index in
      Task { () async throws -> (UInt64, Int) in
        let value = 1_000 + index
        let seq = index % 2 == 0 ? try await counter.send(.set(value)) : try await count.send(value)
        return (seq, value)
      }
    }
    let finished = await withTaskGroup(of: Int.self) { group in
      for index in 0..<(sends * 4) { group.addTask { await Task.yield(); return index } }
      return await group.reduce(0) { count, _ in count + 1 }
    }
    #expect(store.lastSeq == 0, "nothing was committed while the commit lock was held")
    holder.release()
    var told: [(UInt64, Int)] = []
    for sender in senders { told.append(try await sender.value) }
    #expect(finished == sends * 4)
    #expect(holder.othersProgressed == [true], "other tasks finished while the commit was stuck")
    #expect(told.map(\.0).sorted() == Array(1...UInt64(sends)))
    do {
      try await count.send(2_013)
      Issue.record("a count ending in 13 was accepted")
    } catch ChronicleError.rejected(let reason) {
      #expect(reason == "no count ending in 13")
    }
    #expect(try await counter.send(.increment) == UInt64(sends) + 1, "the rejection took no sequence number")
    try store.close()
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    var logged: [UInt64: Holder.Action] = [:]
    try log.forEach { entry in logged[entry.seq] = try entry.codec.decode(Holder.Action.self, from: entry.payload) }
    #expect(logged.count == sends + 1)
    for (seq, value) in told { #expect(logged[seq] == .counter(.set(value)), "the sender of \(value) was told \(seq)") }
  }
}
