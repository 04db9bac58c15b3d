import Chronicle
import DemoLedger
import Foundation
import ChronicleTestTools
import Testing

/// The demo's `ledger-tool`: generic commands plus state-at, replay and diff with the ledger's reducer.
@Suite struct TypedCommandTests {
  /// A ledger log of a few hundred entries with snapshots every 50.
  private func makeLedger(at url: URL, reducer: some Reducer<Ledger.State, Ledger.Action> = Ledger()) throws {
    let store = try Store(
      initialState: Ledger.State(), reducer: reducer, log: .directory(url), options: StoreOptions(snapshotEvery: 50))
    try store.send(.deposit(account: "jenny", cents: 10_000))
    try store.send(.open(account: "donald"))
    for n in 0..<200 { try store.send(.transfer(from: "jenny", to: "donald", cents: n % 7 + 1)) }
    try store.undo()
    try store.restore(to: 2)
    try store.close()
  }

  @Test func stateAtDiffAndReplayUseTheAppsReducer() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("ledger")
    try makeLedger(at: log)

    let stateAt = try Tool.run(["state-at", log.path, "2"], tool: "ledger-tool")
    #expect(stateAt.status == 0, "\(stateAt.stderr)")
    let decoded = try JSONDecoder().decode(Ledger.State.self, from: Data(stateAt.stdout.utf8))
    #expect(decoded.balances == ["jenny": 10_000, "donald": 0])

    let diff = try Tool.run(["diff", log.path, "2", "3"], tool: "ledger-tool")
    #expect(diff.status == 0)
    #expect(diff.stdout.contains("−     \"donald\": 0,"))
    #expect(diff.stdout.contains("+     \"donald\": 1,"))
    #expect(diff.stdout.contains("+   transfers: 1"))

    let same = try Tool.run(["diff", log.path, "2", "204"], tool: "ledger-tool")
    #expect(same.stdout.contains("are equal"), "restore to 2 made the state after 204 equal to it")

    let replay = try Tool.run(["replay", log.path], tool: "ledger-tool")
    #expect(replay.status == 0, "\(replay.stderr)")
    #expect(replay.stdout.contains("replayed 204 entries"))
    #expect(replay.stdout.contains("snapshots checked against the replay: 5"))

    // The generic commands are there too.
    #expect(try Tool.run(["verify", log.path], tool: "ledger-tool").status == 0)
  }

  @Test func replayCatchesAReducerThatDoesNotReproduceTheSnapshots() throws {
    /// Writes the same actions, but its deposits are worth double: the snapshots it leaves
    /// cannot be reproduced by `Ledger`, as if the reducer were not deterministic.
    struct Inflating: Reducer {
      func reduce(into state: inout Ledger.State, action: Ledger.Action) -> Effect<Ledger.Action> {
        if case .deposit(let account, let cents) = action {
          return Ledger().reduce(into: &state, action: .deposit(account: account, cents: cents * 2))
        }
        return Ledger().reduce(into: &state, action: action)
      }
    }
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("ledger")
    try makeLedger(at: log, reducer: Inflating())
    let replay = try Tool.run(["replay", log.path], tool: "ledger-tool")
    #expect(replay.status == 1)
    #expect(replay.errorLines == [
      "ledger-tool: the replayed state after entry 50 differs from its snapshot: the reducer is not deterministic, "
        + "or the state changed without a new state schema version"
    ])
  }

  @Test func badInputExitsTwoNamingTheProblem() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("ledger")
    try makeLedger(at: log)
    let past = try Tool.run(["state-at", log.path, "999"], tool: "ledger-tool")
    #expect(past.status == 2)
    #expect(past.errorLines == ["ledger-tool: the log holds no entry 999"])
    let missing = try Tool.run(["state-at", scratch.child("nope").path, "1"], tool: "ledger-tool")
    #expect(missing.status == 2)
    #expect(missing.errorLines.first?.contains("the path does not exist") == true)
  }
}
