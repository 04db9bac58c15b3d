import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
import Testing

/// A list of numbers: every state is distinct enough to catch a wrong jump.
private struct Numbers: Reducer {
  typealias State = [Int]
  enum Action: Codable, Sendable, Equatable { case add(Int), refreshed }
  func reduce(into state: inout [Int], action: Action) -> Effect<Action> {
    if case .add(let value) = action { state.append(value) }
    return .none
  }
}

/// Rebuilding states over restore, undo and redo entries, and how they read in the timeline.
@Suite struct JumpReplayTests {
  /// Reopening with another state schema replays the whole log: with each undo
  /// refolding from the start for its target, 20 pairs took 19 s and 200 never ended.
  @Test func hundredsOfSendUndoPairsReopenWithAnotherStateSchema() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url))
    for value in 1...300 {
      try store.send(.add(value))
      try store.undo()
    }
    try store.send(.add(7))
    try store.undo()
    try store.redo()
    try store.close()

    let reopened = try Store(
      initialState: [], reducer: Numbers(), log: .directory(dir.url), options: StoreOptions(stateSchemaVersion: 2))
    #expect(reopened.state == [7])
    #expect(reopened.recovery.snapshotSeq == nil)
    #expect(reopened.recovery.entriesReplayed == 603)
    #expect(reopened.canUndo)
    #expect(!reopened.canRedo)
    for seq in stride(from: 0, through: 600, by: 37) {
      #expect(try reopened.state(at: UInt64(seq)) == (seq % 2 == 1 ? [seq / 2 + 1] : []), "state(at: \(seq))")
    }
    try reopened.undo()
    #expect(reopened.state == [])
    try reopened.close()
  }

  /// Chains of jumps to jumps (undo of a redo of an undo …) and restores to random
  /// points on a live store without snapshots; then every state, and a fresh replay.
  @Test func longChainsOfJumpsResolveOnceAndMatchTheLiveStates() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let options = StoreOptions(snapshotEvery: 0)
    var store: Store<[Int], Numbers.Action>? = try Store(
      initialState: [], reducer: Numbers(), log: .directory(dir.url), options: options)
    var random = SplitMix64(seed: 99)
    var statesAfter: [[Int]] = [[]]
    for step in 0..<600 {
      let live = store!
      switch Int.random(in: 0..<10, using: &random) {
      case 0..<3: try live.send(.add(step))
      case 3..<5: if live.canUndo { try live.undo() } else { try live.send(.add(-step)) }
      case 5..<7: if live.canRedo { try live.redo() } else { try live.send(.add(-step)) }
      default: try live.restore(to: UInt64.random(in: 0...live.lastSeq, using: &random))
      }
      statesAfter.append(live.state)
      #expect(live.lastSeq == UInt64(statesAfter.count - 1))
    }
    for seq in stride(from: 0, to: statesAfter.count, by: 7) {
      #expect(try store!.state(at: UInt64(seq)) == statesAfter[seq], "state(at: \(seq))")
    }
    var replayed: [[Int]] = [[]]
    try store!.replayStates { _, state in
      replayed.append(state)
      return true
    }
    #expect(replayed == statesAfter)
    #expect(store!.unplannedFolds == 0, "every state a jump needed was planned")
    let canUndo = store!.canUndo
    let canRedo = store!.canRedo
    try store!.flush()
    store = nil  // dropped without close: no snapshot, the next open folds all 600 entries
    let reopened = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url), options: options)
    #expect(reopened.state == statesAfter.last)
    #expect(reopened.recovery.entriesReplayed == 600)
    #expect(reopened.canUndo == canUndo)
    #expect(reopened.canRedo == canRedo)
    try reopened.close()
  }

  @Test func aBatchIsOneUndoStep() throws {
    let store = try Store(initialState: [], reducer: Numbers())
    try store.send(.add(1))
    try store.send(contentsOf: [.add(2), .add(3), .add(4)])
    #expect(store.state == [1, 2, 3, 4])
    try store.undo()
    #expect(store.state == [1], "one undo takes back the whole batch")
    try store.redo()
    #expect(store.state == [1, 2, 3, 4])
    try store.undo()
    try store.undo()
    #expect(store.state == [])
    #expect(!store.canUndo)

    // Inside an undo group, a batch joins the group's one step.
    try store.undoGroup {
      try store.send(.add(5))
      try store.send(contentsOf: [.add(6), .add(7)])
    }
    try store.send(contentsOf: Array(repeating: .add(8), count: 20))  // longer than the steps that keep their state
    try store.undo()
    #expect(store.state == [5, 6, 7])
    try store.undo()
    #expect(store.state == [])
  }

  @Test func isUndoableIsTypedByTheAction() throws {
    let options = StoreOptions(isUndoable: { (action: Numbers.Action) in action != .refreshed })
    let store = try Store(initialState: [], reducer: Numbers(), options: options)
    try store.send(.add(1))
    try store.send(.refreshed)
    try store.undo()
    #expect(store.state == [])
    #expect(try store.history.map(\.isUndoable) == [true, false, true])
    try store.close()

    // A predicate of another action type is refused when the store opens, not ignored.
    let wrong = StoreOptions(isUndoable: { (action: Counter.Action) in action != .reset })
    #expect {
      _ = try Store(initialState: [], reducer: Numbers(), options: wrong)
    } throws: { error in
      "\(error)".contains("isUndoable takes Action but this store's actions are Action")
    }
  }

  @Test func theTimelineNamesTheActionEachJumpRestores() throws {
    let store = try Store(initialState: [], reducer: Numbers())
    try store.send(.add(1))  // 1
    try store.send(.add(2))  // 2
    try store.undo()  // 3 → 1
    try store.redo()  // 4 → 2
    try store.undo()  // 5 → 3, which is the state after 1
    try store.restore(to: 4)  // 6 → 4, which is the state after 2
    let timeline = try store.timeline()
    #expect(timeline.items.map(\.entry.target) == [nil, nil, 1, 2, 3, 4])
    #expect(timeline.items.map(\.restores) == [nil, nil, 1, 2, 1, 2])
    let lines = timeline.rendered.split(separator: "\n")
    #expect(lines[5].contains("→ state after 1 (via 3)"))
    #expect(lines[6].contains("→ state after 2 (via 4)"))
  }

  @Test func aScopedStoreUndoesAndRedoesThroughItsRoot() throws {
    struct App: Reducer {
      struct State: Codable, Sendable, Equatable { var numbers: [Int] = [] }
      enum Action: Codable, Sendable, Equatable { case numbers(Numbers.Action) }
      func reduce(into state: inout State, action: Action) -> Effect<Action> {
        switch action {
        case .numbers(let action): _ = Numbers().reduce(into: &state.numbers, action: action)
        }
        return .none
      }
    }
    let store = try Store(initialState: App.State(), reducer: App())
    let numbers = store.scope(state: \.numbers, action: App.Action.numbers)
    #expect(!numbers.canUndo)
    try numbers.send(.add(1))
    try numbers.send(.add(2))
    #expect(numbers.canUndo && !numbers.canRedo)
    try numbers.undo()
    #expect(numbers.state == [1])
    #expect(numbers.canRedo)
    try numbers.redo()
    #expect(numbers.state == [1, 2])
    #expect(store.state.numbers == [1, 2])
    try numbers.undo()
    try numbers.undo()
    #expect(!numbers.canUndo)
    #expect(throws: ChronicleError.self) { try numbers.undo() }
  }

  @Test func theRecoveryReportReadsLikeTheGuide() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url))
    try store.send(.add(1))
    try store.close()
    let reopened = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url))
    let text = "\(reopened.recovery)"
    #expect(text.hasPrefix("RecoveryReport(snapshotSeq: 1, entriesReplayed: 0, lastSeq: 1, duration: "), "\(text)")
    #expect(text.hasSuffix(", warnings: [])"), "\(text)")
    #expect(!text.contains("seconds"), "\(text)")
    try reopened.close()
  }
}
