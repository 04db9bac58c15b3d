import Chronicle
import Foundation
import ChronicleTestTools
import Testing

/// A counter whose actions add numbers: every state is distinct enough to catch a wrong jump.
private struct Adder: Reducer {
  typealias State = [Int]
  enum Action: Codable, Sendable, Equatable { case add(Int), note(String) }
  func reduce(into state: inout [Int], action: Action) -> Effect<Action> {
    if case .add(let value) = action { state.append(value) }
    return .none
  }
}

/// The semantics, written as simply as possible: a text editor's undo and redo stacks of states.
private struct Model {
  var current: [Int] = []
  var undo: [[Int]] = []
  var redo: [[Int]] = []
  var statesAfter: [[Int]] = [[]]  // index = seq
  let depth: Int

  mutating func pushUndo(_ state: [Int]) {
    undo.append(state)
    if undo.count > depth { undo.removeFirst() }
  }
  mutating func action(_ value: Int, undoable: Bool = true, continuesGroup: Bool = false) {
    if undoable {
      if !continuesGroup || undo.isEmpty { pushUndo(current) }
      redo.removeAll()
    }
    current.append(value)
    statesAfter.append(current)
  }
  mutating func note() { statesAfter.append(current) }
  mutating func undoStep() {
    redo.append(current)
    current = undo.removeLast()
    statesAfter.append(current)
  }
  mutating func redoStep() {
    pushUndo(current)
    current = redo.removeLast()
    statesAfter.append(current)
  }
  mutating func restore(to seq: Int) {
    pushUndo(current)
    redo.removeAll()
    current = statesAfter[seq]
    statesAfter.append(current)
  }
}

@Suite struct TimeTravelTests {
  /// Random mixes of sends, batches, groups, undo, redo, restore, `state(at:)` and
  /// reopenings against the model. Jump-heavy mixes reopen with another state schema
  /// half the time, so that recovery folds the whole log through every jump.
  @Test(arguments: [
    (1, 400, 7, 39), (2, 400, 7, 39), (3, 400, 7, 39), (4, 400, 7, 39),
    (5, 600, 1_000, 70), (6, 600, 1_000, 70), (7, 600, 0, 70), (8, 600, 50, 70),
  ] as [(UInt64, Int, Int, Int)])
  func randomHistoriesMatchTheModelThroughReopenings(seed: UInt64, steps: Int, snapshotEvery: Int, jumps: Int) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var random = SplitMix64(seed: seed)
    let depth = 8
    var options = StoreOptions(
      snapshotEvery: snapshotEvery, undoDepth: depth,
      isUndoable: { (action: Adder.Action) in
        if case .note = action { return false }
        return true
      })
    var store: Store<[Int], Adder.Action>! = try Store(
      initialState: [], reducer: Adder(), log: .directory(dir.url), options: options)
    // Even seeds watch every transition: batches then keep each intermediate
    // state for the subscriber; odd seeds let batches reduce in place.
    let seen = Recorder<[Int]>()
    var subscription = seed % 2 == 0 ? store.subscribe { new, _ in seen.append(new) } : nil
    var model = Model(depth: depth)
    // `jumps` percent of the steps undo, redo or restore; the rest are spread as before.
    let scale = Double(100 - jumps) / 61
    func cut(_ percent: Int) -> Int { Int((Double(percent) * scale).rounded()) }
    let sends = cut(45), notes = sends + cut(5), groups = notes + cut(5)
    let undos = groups + jumps * 20 / 39, redos = undos + jumps * 13 / 39, restores = redos + jumps * 6 / 39
    let batches = restores + cut(3)
    for step in 0..<steps {
      let roll = Int.random(in: 0..<100, using: &random)
      switch roll {
      case 0..<sends:
        let value = Int.random(in: 0..<1000, using: &random)
        try store.send(.add(value))
        model.action(value)
      case sends..<notes:
        try store.send(.note("n\(step)"))
        model.note()
      case notes..<groups:
        let values = (0..<Int.random(in: 2...3, using: &random)).map { _ in Int.random(in: 0..<1000, using: &random) }
        try store.undoGroup { for value in values { try store.send(.add(value)) } }
        for (index, value) in values.enumerated() { model.action(value, continuesGroup: index > 0) }
      case groups..<undos:
        if model.undo.isEmpty {
          #expect(throws: ChronicleError.self) { try store.undo() }
        } else {
          try store.undo()
          model.undoStep()
        }
      case undos..<redos:
        if model.redo.isEmpty {
          #expect(throws: ChronicleError.self) { try store.redo() }
        } else {
          try store.redo()
          model.redoStep()
        }
      case redos..<restores:
        let target = Int.random(in: 0...(model.statesAfter.count - 1), using: &random)
        try store.restore(to: UInt64(target))
        model.restore(to: target)
      case restores..<batches:
        // A batch longer than the undo steps that keep their state: deeper undos recompute theirs.
        let values = (0..<Int.random(in: 2...12, using: &random)).map { _ in Int.random(in: 0..<1000, using: &random) }
        let before = seen.values.count
        try store.send(contentsOf: values.map { Adder.Action.add($0) })
        var intermediate: [[Int]] = []
        for (index, value) in values.enumerated() {
          model.action(value, continuesGroup: index > 0)  // a batch is one undo step
          intermediate.append(model.current)
        }
        if subscription != nil { #expect(Array(seen.values[before...]) == intermediate, "seed \(seed) step \(step)") }
      default:
        if Bool.random(using: &random) { try store.close() }  // else: dropped without close, no final snapshot
        subscription = nil
        store = nil
        // Another state schema makes every snapshot unusable: recovery folds the whole log.
        if jumps > 39 { options.stateSchemaVersion = Bool.random(using: &random) ? 1 : 2 }
        store = try Store(initialState: [], reducer: Adder(), log: .directory(dir.url), options: options)
        if seed % 2 == 0 { subscription = store.subscribe { new, _ in seen.append(new) } }
      }
      #expect(store.state == model.current, "seed \(seed) step \(step)")
      #expect(store.canUndo == !model.undo.isEmpty, "seed \(seed) step \(step)")
      #expect(store.canRedo == !model.redo.isEmpty, "seed \(seed) step \(step)")
      #expect(store.lastSeq == UInt64(model.statesAfter.count - 1))
      if step % (jumps > 39 ? 25 : 10) == 0 {
        let seq = Int.random(in: 0...(model.statesAfter.count - 1), using: &random)
        #expect(try store.state(at: UInt64(seq)) == model.statesAfter[seq], "state(at: \(seq)), seed \(seed)")
      }
    }
    // Every prefix, across snapshots, restores and undo entries.
    for seq in stride(from: 0, to: model.statesAfter.count, by: jumps > 39 ? 11 : 3) {
      #expect(try store.state(at: UInt64(seq)) == model.statesAfter[seq], "state(at: \(seq)), seed \(seed)")
    }
    #expect(store.unplannedFolds == 0, "every state a jump needed was planned, seed \(seed)")
    try store.close()
  }

  @Test func undoAfterANewActionClearsRedoButKeepsTheOldBranchInTheLog() throws {
    let store = try Store(initialState: [], reducer: Adder())
    try store.send(.add(1))
    try store.send(.add(2))
    try store.undo()
    #expect(store.state == [1])
    #expect(store.canRedo)
    try store.send(.add(3))
    #expect(!store.canRedo)
    #expect(throws: ChronicleError.self) { try store.redo() }
    #expect(store.state == [1, 3])
    let history = try store.history
    #expect(history.map(\.kind) == [.action, .action, .undo, .action])
    #expect(history[2].target == 1)
    #expect(history[1].action == .add(2), "the undone branch stays in the audit trail")
  }

  @Test func theTimelineShowsWhatIsInEffect() throws {
    let store = try Store(initialState: [], reducer: Adder())
    try store.send(.add(1))
    try store.send(.add(2))
    try store.undo()
    try store.send(.add(4))
    let timeline = try store.timeline()
    #expect(timeline.items.map(\.entry.seq) == [1, 2, 3, 4])
    #expect(timeline.items.map(\.isInEffect) == [true, false, true, true])
    #expect(timeline.current == 4)
    #expect(timeline.undoTargets == [0, 3])
    #expect(timeline.redoTargets.isEmpty)
    #expect(timeline.rendered.contains("← current"))
    // Printed, it is the table, not a dump of the struct.
    #expect("\(timeline)" == timeline.rendered)
    #expect(String(describing: timeline).hasPrefix("  seq  kind     type"))
    #expect(try store.timeline(limit: 2).items.map(\.entry.seq) == [3, 4])
  }

  @Test func stateAtRejectsSequenceNumbersPastTheEnd() throws {
    let store = try Store(initialState: [], reducer: Adder())
    try store.send(.add(1))
    #expect(try store.state(at: 0) == [])
    #expect(try store.state(at: 1) == [1])
    #expect(throws: ChronicleError.self) { try store.state(at: 2) }
  }

  @Test func undoDepthIsBounded() throws {
    let store = try Store(initialState: [], reducer: Adder(), options: StoreOptions(undoDepth: 3))
    for value in 1...6 { try store.send(.add(value)) }
    for _ in 0..<3 { try store.undo() }
    #expect(store.state == [1, 2, 3])
    #expect(!store.canUndo)
  }
}
