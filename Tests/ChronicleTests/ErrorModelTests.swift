import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

// MARK: - A state that refuses to be encoded

/// A counter whose state cannot be encoded while `isBroken` is set: its
/// snapshots fail, while its actions (the entries) encode normally.
struct Fragile: Reducer {
  struct State: Codable, Sendable, Equatable {
    var count = 0
    var isBroken = false

    struct Unencodable: Error, CustomStringConvertible {
      var description: String { "the state refuses to be encoded" }
    }

    func encode(to encoder: any Encoder) throws {
      if isBroken { throw Unencodable() }
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(count, forKey: .count)
      try container.encode(isBroken, forKey: .isBroken)
    }
  }
  enum Action: Codable, Sendable, Equatable { case increment, breakEncoding, repairEncoding }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .breakEncoding: state.isBroken = true
    case .repairEncoding: state.isBroken = false
    }
    return .none
  }
}

/// A counter whose actions include one that cannot be encoded, and a validator that refuses a count.
struct PickyCounter: Reducer {
  struct State: Codable, Sendable, Equatable { var count = 0 }
  enum Action: Codable, Sendable, Equatable {
    case add(Int)
    case unencodable

    struct Refused: Error, CustomStringConvertible {
      var description: String { "this action refuses to be encoded" }
    }

    func encode(to encoder: any Encoder) throws {
      guard case .add(let value) = self else { throw Refused() }
      var container = encoder.singleValueContainer()
      try container.encode(value)
    }

    init(from decoder: any Decoder) throws { self = .add(try decoder.singleValueContainer().decode(Int.self)) }
  }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    if case .add(let value) = action { state.count += value }
    return .none
  }
  /// The count the validator refuses.
  static let refusedCount = -1
}

@Suite struct ErrorModelTests {
  // MARK: - Empty batches

  @Test func anEmptyBatchThrowsItsOwnErrorAndLogsNothing() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    defer { try? store.close() }
    try store.send(.increment)
    #expect(throws: ChronicleError.self) { try store.send(contentsOf: [Counter.Action]()) }
    do {
      try store.send(contentsOf: [Counter.Action]())
      Issue.record("an empty batch was accepted")
    } catch ChronicleError.emptyBatch {
    }
    #expect(store.lastSeq == 1)
    #expect(store.state.count == 1)
  }

  // MARK: - Batches that fail

  /// A batch fails at its first bad action, whichever the reason (rejected or not encodable), and
  /// writes nothing: for small batches, encoded action by action, and for large ones, whose payloads
  /// are encoded on a second thread while the actions are reduced.
  @Test(arguments: [8, 64, 1_000])
  func aBatchFailsAtItsFirstBadAction(size: Int) throws {
    let store = try Store(
      initialState: PickyCounter.State(), reducer: PickyCounter(),
      validators: [Validator("never at the refused count") { $0.count != PickyCounter.refusedCount }])
    defer { try? store.close() }
    func batch(unencodableAt: Int?, rejectedAt: Int?) -> [PickyCounter.Action] {
      (0..<size).map { index in
        if index == unencodableAt { return .unencodable }
        // Reaching the refused count at `rejectedAt`, from 0 after the adds of 0 before it.
        return .add(index == rejectedAt ? PickyCounter.refusedCount : 0)
      }
    }
    func failure(_ actions: [PickyCounter.Action]) -> String {
      do {
        try store.send(contentsOf: actions)
        return "accepted"
      } catch ChronicleError.rejected {
        return "rejected"
      } catch ChronicleError.unencodable(let type, let underlying) {
        return "unencodable \(type): \(underlying)"
      } catch {
        return "\(error)"
      }
    }
    let unencodable = "unencodable Action: this action refuses to be encoded"
    #expect(failure(batch(unencodableAt: size / 2, rejectedAt: size - 1)) == unencodable)
    #expect(failure(batch(unencodableAt: size - 1, rejectedAt: size / 2)) == "rejected")
    #expect(failure(batch(unencodableAt: size / 2, rejectedAt: size / 2)) == unencodable)
    #expect(failure(batch(unencodableAt: 0, rejectedAt: nil)) == unencodable)
    #expect(failure(batch(unencodableAt: nil, rejectedAt: 0)) == "rejected")
    #expect(store.lastSeq == 0, "a failed batch writes nothing")
    #expect(store.state == PickyCounter.State())

    let good = (0..<size).map { PickyCounter.Action.add($0) }
    #expect(try store.send(contentsOf: good) == 1...UInt64(size))
    #expect(store.state.count == (0..<size).reduce(0, +))
    let logged = try store.entries(in: 1...UInt64(size)).map(\.action)
    #expect(logged == good, "every entry holds its own action, in order")
  }

  // MARK: - Failed periodic snapshots

  /// A snapshot that cannot be written reaches `onBackgroundError` (not the
  /// effect handler), once per `snapshotEvery` entries rather than on every send,
  /// and the store takes snapshots again once the state can be encoded.
  @Test func aFailedSnapshotIsReportedAsBackgroundWorkAndRetriedAtTheNextInterval() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let background = Recorder<String>()
    let effectErrors = Recorder<String>()
    let options = StoreOptions(
      snapshotEvery: 3, onEffectError: { effectErrors.append("\($0)") },
      onBackgroundError: { error in
        if case .snapshotFailed(let seq, .unencodable) = error {
          background.append("snapshot \(seq)")
        } else {
          background.append("unexpected: \(error)")
        }
      })
    let store = try Store(
      initialState: Fragile.State(), reducer: Fragile(), log: .directory(directory.url), options: options)
    try store.send(.breakEncoding)  // 1
    try store.send(.increment)  // 2
    #expect(background.values.isEmpty)
    try store.send(.increment)  // 3: due, fails
    #expect(background.values == ["snapshot 3"])
    try store.send(.increment)  // 4
    try store.send(.increment)  // 5
    #expect(background.values == ["snapshot 3"], "a failed snapshot must not be retried on every send")
    try store.send(.increment)  // 6: retried, fails again
    #expect(background.values == ["snapshot 3", "snapshot 6"])
    try store.send(.repairEncoding)  // 7
    try store.send(.increment)  // 8
    try store.send(.increment)  // 9: retried, written
    try store.send(.increment)  // 10
    #expect(background.values == ["snapshot 3", "snapshot 6"])
    #expect(effectErrors.values.isEmpty, "a snapshot failure is not an effect error")
    try store.close()  // writes the snapshot at 10

    let reopened = try Store(
      initialState: Fragile.State(), reducer: Fragile(), log: .directory(directory.url), options: options)
    #expect(reopened.recovery.snapshotSeq == 10)
    #expect(reopened.state == Fragile.State(count: 8, isBroken: false))
    let snapshots = try HistoryReader<Fragile.State, Fragile.Action>(
      directory: directory.url, initialState: Fragile.State(), reducer: Fragile())
    defer { snapshots.close() }
    #expect(try snapshots.snapshotStates().map(\.seq) == [9, 10])
    try reopened.close()
  }

  /// The handler runs outside the store's locks: it may send.
  @Test func theBackgroundErrorHandlerMaySend() throws {
    let box = Recorder<Store<Fragile.State, Fragile.Action>>()
    let options = StoreOptions(
      snapshotEvery: 2,
      onBackgroundError: { _ in
        if let store = box.values.first { _ = try? store.send(.repairEncoding) }
      })
    let store = try Store(initialState: Fragile.State(), reducer: Fragile(), options: options)
    defer { try? store.close() }
    box.append(store)
    try store.send(.breakEncoding)
    try store.send(.increment)  // the snapshot fails; the handler repairs
    #expect(store.lastSeq == 3)
    #expect(store.state.isBroken == false)
  }

  /// With `.full`, async sends are led by the store's commit thread; a handler that sends
  /// synchronously from there, while the lead waits to be taken up by that same thread for another
  /// async send, must not wait for itself. Every send returns.
  @Test func theBackgroundErrorHandlerMaySendWhileTasksSendFull() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let box = Recorder<Store<Fragile.State, Fragile.Action>>()
    let handled = Recorder<Int>()
    let options = StoreOptions(
      durability: .full, snapshotEvery: 2,
      onBackgroundError: { _ in
        if let store = box.values.first, (try? store.send(.increment)) != nil { handled.append(1) }
      })
    let store = try Store(
      initialState: Fragile.State(), reducer: Fragile(), log: .directory(directory.url), options: options)
    box.append(store)
    try store.send(.breakEncoding)  // every snapshot from here on fails
    let finished = DispatchSemaphore(value: 0)
    Task {
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<4 {
          group.addTask { for _ in 0..<25 { _ = try? await store.send(.increment) } }
        }
      }
      finished.signal()
    }
    #expect(finished.wait(timeout: .now() + 30) == .success, "every async send returned")
    try store.send(.repairEncoding)  // the snapshot `close()` writes can be encoded
    try store.close()
    #expect(!handled.values.isEmpty, "the handler sent")
  }

  // MARK: - Messages

  /// `localizedDescription` is the error's own sentence, not Foundation's
  /// "The operation could not be completed".
  @Test func localizedDescriptionsAreTheErrorsSentences() throws {
    let store = try Store(initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft])
    defer { try? store.close() }
    do {
      try store.send(.transfer(from: "a", to: "b", cents: 1))
      Issue.record("the overdraft was accepted")
    } catch {
      #expect(error.localizedDescription == "rejected: no account may go below zero")
    }

    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let missing = directory.url.appendingPathComponent("nothing-here").path
    do {
      _ = try ActionLog(directory: URL(fileURLWithPath: missing), access: .readOnly)
      Issue.record("a missing log was opened")
    } catch {
      #expect(error is LogError)
      #expect(error.localizedDescription == "\(error)")
      #expect(error.localizedDescription.contains(missing))
    }

    let errors: [any Error] = [
      ChronicleError.emptyBatch, ChronicleError.noSuchEntry(seq: 42),
      ChronicleError.snapshotFailed(seq: 7, underlying: .closed),
      LogError.corruptEntry(path: "/logs/app", seq: 9, reason: "bad hash"),
      LMDBError(code: .mapFull, operation: "put in 'entries' (/logs/app)"),
      CBORError(offset: 3, reason: "invalid UTF-8 in text string"),
    ]
    for error in errors {
      #expect(error.localizedDescription == "\(error)")
      #expect(!error.localizedDescription.contains("could not be completed"))
    }
    #expect(ChronicleError.snapshotFailed(seq: 7, underlying: .closed).localizedDescription
      == "the snapshot at entry 7 could not be written (the entries are safe): the store is closed")
  }
}
