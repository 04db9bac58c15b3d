import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
import Testing

/// A replay from scratch reads the log in chunks of read transactions: nothing is skipped
/// or repeated at the chunk boundaries.
@Suite struct ReplayChunkTests {
  @Test func replayFromScratchCrossesChunkBoundaries() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(directory.url),
      options: StoreOptions(snapshotEvery: 0))
    try store.send(contentsOf: Array(repeating: Counter.Action.increment, count: 9_000))
    try store.send(.set(-1))
    try store.close()

    let reader = try HistoryReader(directory: directory.url, initialState: Counter.State(), reducer: Counter())
    defer { reader.close() }
    var seen: [UInt64] = []
    var counts: [Int] = []
    try reader.replayFromScratch { seq, state in
      seen.append(seq)
      counts.append(state.count)
      return true
    }
    #expect(seen == Array(1...9_001))
    #expect(counts.prefix(9_000) == ArraySlice(1...9_000))
    #expect(counts.last == -1)
  }
}
