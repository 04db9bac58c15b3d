import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
import Testing

@Suite struct HistoryReaderTests {
  @Test func readsStatesWhileTheStoreWritesAndReplaysToTheSnapshots() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(
      initialState: Ledger.State(), reducer: Ledger(), log: .directory(dir.url),
      options: StoreOptions(snapshotEvery: 10, snapshotsKept: 5))
    try store.send(.deposit("a", cents: 100))
    for _ in 0..<30 { try store.send(.transfer(from: "a", to: "b", cents: 1)) }
    try store.undo()
    let reader = try HistoryReader(directory: dir.url, initialState: Ledger.State(), reducer: Ledger())
    #expect(try reader.lastSeq == 32)
    #expect(try reader.state(at: 1) == Ledger.State(balances: ["a": 100]))
    #expect(try reader.state(at: 32) == store.state)
    #expect(throws: ChronicleError.self) { try reader.state(at: 33) }
    try store.send(.deposit("c", cents: 5))
    #expect(try reader.state(at: 33) == store.state, "sees what the writer commits")

    var replayed: [UInt64: Ledger.State] = [:]
    try reader.replayFromScratch { seq, state in
      replayed[seq] = state
      return true
    }
    #expect(replayed.count == 33)
    let snapshots = try reader.snapshotStates()
    #expect(snapshots.map(\.seq) == [10, 20, 30])
    for (seq, state) in snapshots { #expect(try state.get() == replayed[seq], "snapshot \(seq)") }
    reader.close()
    try store.close()
  }
}
