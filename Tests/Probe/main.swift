// A helper process for Chronicle's tests: it opens logs from another
// process, so tests can check locking, cross-process reading and crashes.
//
//   chronicle-probe hold-writer DIR        open DIR for writing, print "ready", wait for stdin to close
//   chronicle-probe try-writer DIR         print "opened" or the error, exit 0 or 3
//   chronicle-probe try-open-as-nobody DIR read|write
//                                          drop to uid/gid 65534, try to open, print "opened" or the error, exit 0 or 3
//   chronicle-probe store-send DIR COUNT full|normal [batch]
//                                          open a Store (snapshot every 50) and send COUNT increments,
//                                          one by one or in batches of `batch`; print each acknowledged seq
//   chronicle-probe append DIR COUNT [full|normal] [pauseMicros]
//                                          append COUNT entries, print each acknowledged seq
//   chronicle-probe append-for DIR MILLIS  append as fast as possible for MILLIS ms, print "at N" every 500
//                                          entries and "done N cleared C" at the end (C: stale readers cleared)
//   chronicle-probe send-cost DIR COUNT     send COUNT flat actions (`tick`), then COUNT nested ones (`todos.edit.rename`),
//                                          to a Store in DIR; print the mean time per send of each
//   chronicle-probe name-cost - COUNT      time the type namer on flat and nested actions, JSON and CBOR (ns per call)
//   chronicle-probe read-hold DIR          open DIR read-only, print "inside PID" inside a read transaction, hang there
//   chronicle-probe read-pipe DIR          with SIGPIPE's default action, write entries to stdout inside one read
//                                          transaction, again and again: dies of SIGPIPE there when the reader leaves
//   chronicle-probe store-navigate DIR     open a navigation store, print "ready LAST-SEQ", then send each
//                                          JSON navigation action read from stdin, printing its seq
import Chronicle
import ChronicleLog
import ChronicleNavigation
import Foundation

/// The counter the store commands run; its actions decode as the tests' `Counter.Action`.
struct ProbeCounter: Reducer {
  struct State: Codable, Sendable { var count = 0; var isLoading = false }
  enum Action: Codable, Sendable { case increment }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    state.count += 1
    return .none
  }
}

/// A counter with a large state (ITEMS strings), so that snapshots take a while to write.
/// `Tests/ChronicleTests/ReliabilityTests.swift` defines the same reducer to replay its logs.
struct ProbeBigCounter: Reducer {
  struct State: Codable, Sendable { var count = 0; var items: [String] = [] }
  enum Action: Codable, Sendable { case increment }
  static func initialState(items: Int) -> State {
    State(count: 0, items: (0..<items).map { "item \($0) of the reliability state" })
  }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    state.count += 1
    if !state.items.isEmpty { state.items[state.count % state.items.count] = "set by \(state.count)" }
    return .none
  }
}

/// The screens `store-navigate` navigates; `Tests/ChronicleTests/NavigationTests.swift` defines the
/// same routes (`Screen`) to reopen its logs.
enum ProbeScreen: Codable, Hashable, Sendable {
  case accounts, account(String), transfer(from: String), settings, signIn, about
}

/// Opens a `ProbeBigCounter` store.
func openBigStore(_ directory: URL, items: Int, options: StoreOptions) throws -> Store<
  ProbeBigCounter.State, ProbeBigCounter.Action
> {
  try Store(
    initialState: ProbeBigCounter.initialState(items: items), reducer: ProbeBigCounter(),
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

/// Prints a line at once (unbuffered), so the parent sees each acknowledgement before a kill.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments.dropFirst()
guard let command = arguments.first, arguments.count >= 2 else {
  FileHandle.standardError.write(Data("usage: chronicle-probe COMMAND DIR …\n".utf8))
  exit(2)
}
let directory = URL(fileURLWithPath: arguments[arguments.startIndex + 1])
let rest = Array(arguments.dropFirst(2))

do {
  switch command {
  case "hold-writer":
    let log = try ActionLog(directory: directory)
    say("ready")
    while readLine() != nil {}
    try log.close()
  case "try-writer":
    do {
      let log = try ActionLog(directory: directory)
      say("opened")
      try log.close()
    } catch {
      say("\(error)")
      exit(3)
    }
  case "try-open-as-nobody":
    guard setgid(65534) == 0, setuid(65534) == 0 else {
      say("cannot drop privileges")
      exit(4)
    }
    do {
      let log = try ActionLog(directory: directory, access: rest.first == "write" ? .readWrite : .readOnly)
      say("opened")
      try log.close()
    } catch {
      say("\(error)")
      exit(3)
    }
  case "store-send":
    let count = Int(rest.first ?? "") ?? 100
    let durability: Durability = rest.count > 1 && rest[1] == "full" ? .full : .normal
    let batch = rest.count > 2 ? max(Int(rest[2]) ?? 1, 1) : 1
    let store = try Store(
      initialState: ProbeCounter.State(), reducer: ProbeCounter(), log: .directory(directory),
      options: StoreOptions(durability: durability, snapshotEvery: 50))
    try sendIncrements(store, count: count, batch: batch, increment: .increment)
  case "append":
    let count = Int(rest.first ?? "") ?? 100
    let durability: Durability = rest.count > 1 && rest[1] == "full" ? .full : .normal
    let pause = rest.count > 2 ? UInt32(rest[2]) ?? 0 : 0
    let log = try ActionLog(directory: directory, options: .init(durability: durability))
    for n in 0..<count {
      let seq = try log.append(
        try NewEntry(encoding: n, typeName: "n", metadata: ["pid": "\(getpid())"], codec: n % 2 == 0 ? .cbor : .json))
      say("\(seq)")
      if pause > 0 { usleep(pause) }
    }
    try log.close()
  case "append-for":
    let millis = Int(rest.first ?? "") ?? 1000
    let log = try ActionLog(directory: directory, options: .init(durability: .normal))
    let deadline = ContinuousClock.now + .milliseconds(millis)
    var count = 0
    while ContinuousClock.now < deadline {
      try log.append(try NewEntry(encoding: count, typeName: "n", metadata: ["pid": "\(getpid())"], codec: .cbor))
      count += 1
      if count % 500 == 0 { say("at \(count)") }
    }
    say("done \(count) cleared \(log.staleReadersCleared)")
    try log.close()
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
  case "read-hold":
    let log = try ActionLog(directory: directory, access: .readOnly)
    try log.forEach { _ in
      say("inside \(getpid())")
      while true { sleep(60) }
    }
  case "read-pipe":
    signal(SIGPIPE, SIG_DFL)
    let log = try ActionLog(directory: directory, access: .readOnly)
    try log.forEach { record in
      let line = Array("\(record.seq) \(record.typeName) inside \(getpid())\n".utf8)
      while true {
        // Raw write(2): the first write after the reader left raises SIGPIPE, inside this transaction.
        guard line.withUnsafeBytes({ write(1, $0.baseAddress, $0.count) }) > 0 else { exit(5) }
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
      initialState: Navigation<ProbeScreen>(), reducer: NavigationReducer<ProbeScreen>(), log: .directory(directory),
      options: StoreOptions(durability: .normal, snapshotEvery: 4))
    say("ready \(store.lastSeq)")
    while let line = readLine() {
      let action = try JSONDecoder().decode(NavigationAction<ProbeScreen>.self, from: Data(line.utf8))
      say("\(try store.send(action))")
    }
    try store.close()
  case "store-open-as-nobody":
    // store-open-as-nobody DIR: drop to uid/gid 65534, open a Store on DIR, print "opened" or the error; exit 0 or 3.
    guard setgid(65534) == 0, setuid(65534) == 0 else {
      say("cannot drop privileges")
      exit(4)
    }
    do {
      let store = try Store(initialState: ProbeCounter.State(), reducer: ProbeCounter(), log: .directory(directory))
      say("opened")
      try store.close()
    } catch {
      say("\(error)")
      exit(3)
    }
  case "store-umask-zero":
    // store-umask-zero DIR: with umask 0, create a log through a Store, send 3 actions, close; print "done".
    umask(0)
    let store = try Store(
      initialState: ProbeCounter.State(), reducer: ProbeCounter(), log: .directory(directory),
      options: StoreOptions(snapshotEvery: 2))
    for _ in 0..<3 { try store.send(.increment) }
    try store.close()
    say("done")
  case "watch-verify":
    // watch-verify DIR TARGET: read DIR while another process writes it; verify every pass (gapless from 1,
    // chain intact, never shrinking) until it holds TARGET entries; print "passes P last L" or "bad …" (exit 3).
    let target = UInt64(rest.first ?? "") ?? 1
    let log = try ActionLog(directory: directory, access: .readOnly)
    var passes = 0
    var last: UInt64 = 0
    while last < target {
      let report = try log.verify()
      passes += 1
      let upper = report.range?.upperBound ?? 0
      guard report.isValid, report.range == nil || report.range?.lowerBound == 1, upper >= last,
        report.entriesChecked == Int(upper)
      else {
        say("bad pass \(passes): \(report.problems.prefix(3)) range \(String(describing: report.range)) after \(last)")
        exit(3)
      }
      last = upper
    }
    say("passes \(passes) last \(last)")
    try log.close()
  default:
    FileHandle.standardError.write(Data("unknown command \(command)\n".utf8))
    exit(2)
  }
} catch {
  FileHandle.standardError.write(Data("\(error)\n".utf8))
  exit(1)
}
