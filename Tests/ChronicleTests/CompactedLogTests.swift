import Chronicle
import Foundation
import ChronicleTestTools
import Testing

/// A list of numbers: every state is distinct enough to catch a wrong jump.
private struct Numbers: Reducer {
  typealias State = [Int]
  enum Action: Codable, Sendable, Equatable { case add(Int) }
  func reduce(into state: inout [Int], action: Action) -> Effect<Action> {
    if case .add(let value) = action { state.append(value) }
    return .none
  }
}

private typealias NumbersStore = Store<[Int], Numbers.Action>

/// Where a test cuts the log.
enum Cut: String, CaseIterable, Sendable {
  /// At the newest snapshot, the head: nothing after the cut.
  case atTheHeadSnapshot
  /// At an older snapshot, with newer snapshots after it.
  case beforeLaterSnapshots
  /// At the newest snapshot, with entries after it and no snapshot covering them (the app was killed).
  case afterTheLastSnapshot
}

/// Every engine operation on a log after `ActionLog.compact`.
@Suite struct CompactedLogTests {
  private let options = StoreOptions(snapshotEvery: 100, undoDepth: 10)

  /// Writes a history of sends, groups, undo, redo and restores; returns the state after each seq.
  private func writeHistory(in url: URL, killed: Bool) throws -> [[Int]] {
    var store: NumbersStore? = try Store(initialState: [], reducer: Numbers(), log: .directory(url), options: options)
    var random = SplitMix64(seed: 14)
    var statesAfter: [[Int]] = [[]]
    func record(_ store: NumbersStore) {
      while statesAfter.count <= Int(store.lastSeq) { statesAfter.append(store.state) }
    }
    for step in 0..<300 {
      let live = store!
      switch Int.random(in: 0..<20, using: &random) {
      case 0..<9: try live.send(.add(step))
      case 9..<12: if live.canUndo { try live.undo() } else { try live.send(.add(-step)) }
      case 12..<14: if live.canRedo { try live.redo() } else { try live.send(.add(-step)) }
      case 14..<16:
        try live.restore(to: UInt64.random(in: live.lastSeq.saturatingSubtract(30)...live.lastSeq, using: &random))
      default:
        try live.undoGroup {
          try live.send(.add(step))
          record(live)
          try live.send(.add(step + 1_000))
        }
      }
      record(live)
    }
    // A tail of plain sends: for a killed store, up to a snapshot and 40 past it,
    // so that its last entries fold from the cut alone.
    var value = 10_000
    func send() throws {
      try store!.send(.add(value))
      value += 1
      record(store!)
    }
    if killed {
      while store!.lastSeq % 100 != 0 { try send() }
      for _ in 0..<40 { try send() }
    } else {
      for _ in 0..<10 { try send() }
    }
    if killed {
      try store!.flush()
    } else {
      try store!.close()
    }
    store = nil
    return statesAfter
  }

  private func snapshotSeqs(_ url: URL) throws -> [UInt64] {
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    return try log.snapshots().map(\.seq)
  }

  /// `state(at: seq)` is the recorded state, or, for states that need a jump's target
  /// from before the cut, a `compacted` error naming it: never a wrong state.
  private func expectState(_ store: NumbersStore, at seq: UInt64, _ statesAfter: [[Int]], cut: UInt64) {
    do {
      let state = try store.state(at: seq)
      #expect(state == statesAfter[Int(seq)], "state(at: \(seq)), cut at \(cut)")
    } catch ChronicleError.compacted(let gone, let at) {
      #expect(gone < cut && at == cut, "state(at: \(seq)): compacted(\(gone), \(at))")
    } catch {
      Issue.record("state(at: \(seq)): \(error)")
    }
  }

  @Test(arguments: Cut.allCases)
  func everyOperationWorksOnACompactedLog(cut placement: Cut) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var statesAfter = try writeHistory(in: dir.url, killed: placement == .afterTheLastSnapshot)
    let head = UInt64(statesAfter.count - 1)
    let snapshots = try snapshotSeqs(dir.url)
    let requested: UInt64
    switch placement {
    case .atTheHeadSnapshot, .afterTheLastSnapshot: requested = head
    case .beforeLaterSnapshots: requested = snapshots[1] + 50
    }
    let report = try ActionLog.compact(directory: dir.url, before: requested, disposal: .discard)
    let cut = report.cut
    switch placement {
    case .atTheHeadSnapshot: #expect(cut == head)
    case .beforeLaterSnapshots: #expect(cut == snapshots[1] && snapshots.last! > cut)
    case .afterTheLastSnapshot: #expect(cut < head && cut == snapshots.last!)
    }

    // Open.
    let live = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url), options: options)
    #expect(live.state == statesAfter.last)
    #expect(live.recovery.warnings.isEmpty, "\(live.recovery.warnings)")

    // state(at:) before, at and after the cut.
    for gone in [0, cut / 2, cut - 1] {
      #expect {
        _ = try live.state(at: gone)
      } throws: { error in
        guard case ChronicleError.compacted(let seq, let at) = error else { return false }
        return seq == gone && at == cut && "\(error)".contains("compacted at entry \(cut)")
      }
    }
    #expect(try live.state(at: cut) == statesAfter[Int(cut)])
    for seq in cut...head { expectState(live, at: seq, statesAfter, cut: cut) }

    // Undo and redo are honest: every step canUndo offers can be taken.
    func recordJump() throws {
      statesAfter.append(live.state)
      let target = try live.history.last!.target!
      #expect(live.state == statesAfter[Int(target)], "jump to \(target)")
      #expect(target >= cut)
    }
    var undos = 0
    while live.canUndo {
      try live.undo()
      try recordJump()
      undos += 1
    }
    #expect(undos <= 2 * 10)
    #expect(throws: ChronicleError.self) { try live.undo() }
    while live.canRedo {
      try live.redo()
      try recordJump()
    }

    // Send, undo, restore after the cut; a restore before it is refused and changes nothing.
    try live.send(.add(77))
    statesAfter.append(live.state)
    try live.undo()
    try recordJump()
    try live.restore(to: cut)
    try recordJump()
    let before = live.lastSeq
    #expect {
      try live.restore(to: cut - 1)
    } throws: { error in
      guard case ChronicleError.compacted(let seq, let at) = error else { return false }
      return seq == cut - 1 && at == cut
    }
    #expect(live.lastSeq == before)
    try live.send(.add(78))
    statesAfter.append(live.state)
    try live.close()
    let snapshotsBefore = try snapshotSeqs(dir.url)
    #expect(snapshotsBefore.first == cut)

    // Another state schema cannot use the snapshot at the cut: a clear refusal, and nothing changes.
    var v2 = options
    v2.stateSchemaVersion = 2
    #expect {
      _ = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url), options: v2)
    } throws: { error in
      "\(error)".contains("compacted at entry \(cut)") && "\(error)".contains("state schema 1")
    }
    #expect(try snapshotSeqs(dir.url) == snapshotsBefore)

    // Back to the snapshot's schema: everything is still there.
    let back = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url), options: options)
    #expect(back.state == statesAfter.last)
    #expect(try back.state(at: cut) == statesAfter[Int(cut)])
    for seq in stride(from: cut, through: back.lastSeq, by: 5) { expectState(back, at: seq, statesAfter, cut: cut) }
    try back.close()
  }

  /// Pruning snapshots (`snapshotsKept`) keeps the snapshot at the cut: history from the cut on stays reachable.
  @Test func pruningKeepsTheSnapshotAtTheCut() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let statesAfter = try writeHistory(in: dir.url, killed: false)
    let report = try ActionLog.compact(directory: dir.url, before: 250, disposal: .discard)
    var pruning = options
    pruning.snapshotsKept = 1
    pruning.snapshotEvery = 5
    let store = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url), options: pruning)
    for value in 0..<30 { try store.send(.add(value)) }
    try store.close()
    let snapshots = try snapshotSeqs(dir.url)
    #expect(snapshots == [report.cut, store.lastSeq])
    let reopened = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url), options: pruning)
    #expect(try reopened.state(at: report.cut) == statesAfter[Int(report.cut)])
    try reopened.close()
  }

  /// A cut that would remove the state a restore after the newest snapshot returns to (the
  /// app was killed before its next snapshot) is refused, naming both entries, and changes
  /// nothing: the log still opens and replays as before.
  @Test func aCutAcrossALaterJumpIsRefused() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(
      initialState: [], reducer: Numbers(), log: .directory(dir.url), options: StoreOptions(snapshotEvery: 10))
    for value in 1...25 { try store.send(.add(value)) }
    let restore = try store.restore(to: 5)
    let expected = store.state
    try store.close()
    do {  // The snapshot `close()` wrote at the restore: as if the app had been killed.
      let log = try ActionLog(directory: dir.url)
      #expect(try log.deleteSnapshot(at: restore))
      try log.close()
    }
    let before = try snapshotSeqs(dir.url)
    #expect(before == [10, 20])

    #expect {
      try ActionLog.compact(directory: dir.url, before: 20, disposal: .discard)
    } throws: { error in
      guard case LogError.jumpAcrossCut(_, let seq, let target, let cut) = error else { return false }
      return seq == restore && target == 5 && cut == 20
    }
    #expect(try snapshotSeqs(dir.url) == before)
    let reopened = try Store(initialState: [], reducer: Numbers(), log: .directory(dir.url), options: options)
    #expect(reopened.state == expected)
    #expect(try reopened.state(at: 3) == [1, 2, 3])
    try reopened.close()
  }
}

extension UInt64 {
  fileprivate func saturatingSubtract(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
