// A helper process for the engine's tests: it runs stores from another process, so tests
// can check crashes, locking and navigation across processes. The log-level commands
// (hold-writer, try-writer, append, watch-verify, …) are `chronicle-log-probe`'s.
//
//   chronicle-probe store-send DIR COUNT full|normal [batch]
//                                          open a Store (snapshot every 50) and send COUNT increments,
//                                          one by one or in batches of `batch`; print each acknowledged seq
//   chronicle-probe store-send-state DIR COUNT full|normal BATCH ITEMS SNAPSHOT_EVERY
//                                          as store-send, with `BigCounter`'s state of ITEMS strings
//   chronicle-probe store-send-concurrent DIR SENDERS full|normal sync|async
//                                          open a Store (snapshot every 50), print "ready LAST-SEQ", then send
//                                          increments from SENDERS threads (sync) or tasks (async) at once, until
//                                          killed; print each acknowledged seq
//   chronicle-probe store-navigate DIR     open a navigation store, print "ready LAST-SEQ", then send each
//                                          JSON navigation action read from stdin, printing its seq
//   chronicle-probe store-open-as-nobody DIR
//                                          drop to uid/gid 65534, open a Store, print "opened" or the error, exit 0 or 3
//   chronicle-probe store-umask-zero DIR   with umask 0, create a log through a Store, send 3 actions; print "done"
//   chronicle-probe send-cost DIR COUNT    send COUNT flat actions (`tick`), then COUNT nested ones (`todos.edit.rename`),
//                                          to a Store in DIR; print the mean time per send of each
//   chronicle-probe store-sign DIR SEED    open a Store with a checkpoint signer (`signingKey`, a checkpoint every 7
//                                          entries, a snapshot every 50), print "ready LAST-SEQ", then send single
//                                          increments and batches of 2…40 (seeded), now and then signing a checkpoint
//                                          with `checkpoint()`; print each acknowledged last seq, until killed
//   chronicle-probe name-cost - COUNT      time the type namer on flat and nested actions, JSON and CBOR (ns per call)
import Chronicle
import ChronicleNavigation
import ChronicleTestSupport
import Foundation
import ChronicleTestTools

/// Opens a `BigCounter` store.
func openBigStore(_ directory: URL, items: Int, options: StoreOptions) throws -> Store<
  BigCounter.State, BigCounter.Action
> {
  try Store(
    initialState: BigCounter.initialState(items: items), reducer: BigCounter(),
    log: .directory(directory), options: options)
}

/// Says "ready LAST-SEQ", sends `count` increments (one by one, or in batches of `batch`),
/// printing each acknowledged sequence number, and closes the store.
func sendIncrements<State, Action>(_ store: Store<State, Action>, count: Int, batch: Int, increment: Action) throws {
  say("ready \(store.lastSeq)")
  var sent = 0
  while sent < count {
    if batch == 1 {
      say("\(try store.send(increment))")
    } else {
      say("\(try store.send(contentsOf: Array(repeating: increment, count: batch)).upperBound)")
    }
    sent += batch
  }
  try store.close()
}

/// A composed app's actions, for `send-cost`: flat cases and a case nested three deep.
struct ProbeComposed: Reducer {
  struct State: Codable, Sendable { var count = 0 }
  enum Edit: Codable, Sendable { case rename(String) }
  enum Todo: Codable, Sendable { case edit(Edit) }
  enum Action: Codable, Sendable { case tick, todos(Todo) }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    state.count += 1
    return .none
  }
}

/// The checkpoint key of `store-sign` (its test verifies with the same seed).
let signingKey = try! NoteSigner(name: "chronicle.test/crash", seed: Array(repeating: 7, count: 32))

runHelper("chronicle-probe") { command, directory, rest in
  switch command {
  case "store-send":
    let count = Int(rest.first ?? "") ?? 100
    let durability: Durability = rest.count > 1 && rest[1] == "full" ? .full : .normal
    let batch = rest.count > 2 ? max(Int(rest[2]) ?? 1, 1) : 1
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(directory),
      options: StoreOptions(durability: durability, snapshotEvery: 50))
    try sendIncrements(store, count: count, batch: batch, increment: .increment)
  case "store-send-concurrent":
    let senders = max(Int(rest.first ?? "") ?? 8, 1)
    let durability: Durability = rest.count > 1 && rest[1] == "full" ? .full : .normal
    let isAsync = rest.count > 2 && rest[2] == "async"
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(directory),
      options: StoreOptions(durability: durability, snapshotEvery: 50))
    say("ready \(store.lastSeq)")
    for _ in 0..<senders {
      if isAsync {
        Task.detached {
          while true {
            guard let seq = try? await store.send(.increment) else { exit(1) }
            say("\(seq)")
          }
        }
      } else {
        Thread {
          while true {
            guard let seq = try? store.send(.increment) else { exit(1) }
            say("\(seq)")
          }
        }.start()
      }
    }
    while true { sleep(60) }
  case "store-sign":
    var random = SplitMix64(seed: UInt64(rest.first ?? "") ?? 1)
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(directory),
      options: StoreOptions(
        durability: .normal, snapshotEvery: 50, checkpointSigner: signingKey, checkpointEvery: 7))
    say("ready \(store.lastSeq)")
    while true {
      let batch = Int.random(in: 0..<3, using: &random) == 0 ? Int.random(in: 2...40, using: &random) : 1
      let last =
        batch == 1
        ? try store.send(.increment) : try store.send(contentsOf: Array(repeating: .increment, count: batch)).upperBound
      say("\(last)")
      if Int.random(in: 0..<25, using: &random) == 0 { try store.checkpoint() }
    }
  case "send-cost":
    let count = Int(rest.first ?? "") ?? 10_000
    let store = try Store(
      initialState: ProbeComposed.State(), reducer: ProbeComposed(), log: .directory(directory),
      options: StoreOptions(durability: .normal, snapshotEvery: 0))
    for (label, action) in [("flat tick", ProbeComposed.Action.tick), ("nested todos.edit.rename", .todos(.edit(.rename("milk"))))] {
      for _ in 0..<1_000 { try store.send(action) }
      let start = ContinuousClock.now
      for _ in 0..<count { try store.send(action) }
      let elapsed = ContinuousClock.now - start
      let micros = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
      say("\(label): \(String(format: "%.2f", micros / Double(count))) µs per send")
    }
    try store.close()
  case "name-cost":
    let count = Int(rest.first ?? "") ?? 1_000_000
    for codec in [PayloadCodec.json, .cbor] {
      for (label, action) in [("flat", ProbeComposed.Action.tick), ("nested", .todos(.edit(.rename("milk"))))] {
        let payload = try codec.encode(action)
        var namer = ActionNamer<ProbeComposed.Action>()
        var name = namer.name(of: action, payload: payload, codec: codec)
        let start = ContinuousClock.now
        for _ in 0..<count { name = namer.name(of: action, payload: payload, codec: codec) }
        let elapsed = ContinuousClock.now - start
        let nanos = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        say("\(codec) \(label) \(name): \(String(format: "%.0f", nanos / Double(count))) ns per name")
      }
    }
  case "store-send-state":
    // store-send-state DIR COUNT full|normal BATCH ITEMS SNAPSHOT_EVERY: as store-send, with a state of
    // ITEMS strings (large, so snapshots take a while) and a snapshot every SNAPSHOT_EVERY entries.
    let count = Int(rest.first ?? "") ?? 100
    let durability: Durability = rest.count > 1 && rest[1] == "full" ? .full : .normal
    let batch = rest.count > 2 ? max(Int(rest[2]) ?? 1, 1) : 1
    let items = rest.count > 3 ? max(Int(rest[3]) ?? 0, 0) : 0
    let snapshotEvery = rest.count > 4 ? max(Int(rest[4]) ?? 50, 0) : 50
    let store = try openBigStore(
      directory, items: items, options: StoreOptions(durability: durability, snapshotEvery: snapshotEvery))
    try sendIncrements(store, count: count, batch: batch, increment: .increment)
  case "store-navigate":
    let store = try Store(
      initialState: Navigation<Screen>(), reducer: NavigationReducer<Screen>(), log: .directory(directory),
      options: StoreOptions(durability: .normal, snapshotEvery: 4))
    say("ready \(store.lastSeq)")
    while let line = readLine() {
      let action = try JSONDecoder().decode(NavigationAction<Screen>.self, from: Data(line.utf8))
      say("\(try store.send(action))")
    }
    try store.close()
  case "store-open-as-nobody":
    // store-open-as-nobody DIR: drop to uid/gid 65534, open a Store on DIR, print "opened" or the error; exit 0 or 3.
    becomeNobody()
    reportingOpen {
      let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(directory))
      say("opened")
      try store.close()
    }
  case "store-umask-zero":
    // store-umask-zero DIR: with umask 0, create a log through a Store, send 3 actions, close; print "done".
    umask(0)
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(directory),
      options: StoreOptions(snapshotEvery: 2))
    for _ in 0..<3 { try store.send(.increment) }
    try store.close()
    say("done")
  default:
    return false
  }
  return true
}
