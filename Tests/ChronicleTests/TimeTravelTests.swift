import Chronicle
import Foundation
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
  @Test(arguments: [1, 2, 3, 4])
  func randomHistoriesMatchTheModelThroughReopenings(seed: UInt64) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var random = SplitMix64(seed: seed)
    let depth = 8
    let options = StoreOptions(
      snapshotEvery: 7, undoDepth: depth,
      isUndoable: { action in
        if case Adder.Action.note = action as! Adder.Action { return false }
        return true
      })
    var store: Store<[Int], Adder.Action>! = try Store(
      initialState: [], reducer: Adder(), log: .directory(dir.url), options: options)
    // Even seeds watch every transition: batches then keep each intermediate
    // state for the subscriber; odd seeds let batches reduce in place.
    let seen = Recorder<[Int]>()
    var subscription = seed % 2 == 0 ? store.subscribe { new, _ in seen.append(new) } : nil
    var model = Model(depth: depth)
    for step in 0..<400 {
      let roll = Int.random(in: 0..<100, using: &random)
      switch roll {
      case 0..<45:
        let value = Int.random(in: 0..<1000, using: &random)
        try store.send(.add(value))
        model.action(value)
      case 45..<50:
        try store.send(.note("n\(step)"))
        model.note()
      case 50..<55:
        let values = (0..<Int.random(in: 2...3, using: &random)).map { _ in Int.random(in: 0..<1000, using: &random) }
        try store.undoGroup { for value in values { try store.send(.add(value)) } }
        for (index, value) in values.enumerated() { model.action(value, continuesGroup: index > 0) }
      case 55..<75:
        if model.undo.isEmpty {
          #expect(throws: ChronicleError.self) { try store.undo() }
        } else {
          try store.undo()
          model.undoStep()
        }
      case 75..<88:
        if model.redo.isEmpty {
          #expect(throws: ChronicleError.self) { try store.redo() }
        } else {
          try store.redo()
          model.redoStep()
        }
      case 88..<94:
        let target = Int.random(in: 0...(model.statesAfter.count - 1), using: &random)
        try store.restore(to: UInt64(target))
        model.restore(to: target)
      case 94..<97:
        // A batch longer than the undo steps that keep their state: deeper undos recompute theirs.
        let values = (0..<Int.random(in: 2...12, using: &random)).map { _ in Int.random(in: 0..<1000, using: &random) }
        let before = seen.values.count
        try store.send(contentsOf: values.map { Adder.Action.add($0) })
        var intermediate: [[Int]] = []
        for value in values {
          model.action(value)
          intermediate.append(model.current)
        }
        if subscription != nil { #expect(Array(seen.values[before...]) == intermediate, "seed \(seed) step \(step)") }
      default:
        if Bool.random(using: &random) { try store.close() }  // else: dropped without close, no final snapshot
        subscription = nil
        store = nil
        store = try Store(initialState: [], reducer: Adder(), log: .directory(dir.url), options: options)
        if seed % 2 == 0 { subscription = store.subscribe { new, _ in seen.append(new) } }
      }
      #expect(store.state == model.current, "seed \(seed) step \(step)")
      #expect(store.canUndo == !model.undo.isEmpty, "seed \(seed) step \(step)")
      #expect(store.canRedo == !model.redo.isEmpty, "seed \(seed) step \(step)")
      #expect(store.lastSeq == UInt64(model.statesAfter.count - 1))
      if step % 10 == 0 {
        let seq = Int.random(in: 0...(model.statesAfter.count - 1), using: &random)
        #expect(try store.state(at: UInt64(seq)) == model.statesAfter[seq], "state(at: \(seq)), seed \(seed)")
      }
    }
    // Every prefix, across snapshots, restores and undo entries.
    for seq in stride(from: 0, to: model.statesAfter.count, by: 3) {
      #expect(try store.state(at: UInt64(seq)) == model.statesAfter[seq], "state(at: \(seq)), seed \(seed)")
    }
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

/// A small deterministic generator, so failures reproduce by seed.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
