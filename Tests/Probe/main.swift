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
import Chronicle
import ChronicleLog
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
    say("ready \(store.lastSeq)")
    var sent = 0
    while sent < count {
      if batch == 1 {
        say("\(try store.send(.increment))")
      } else {
        say("\(try store.send(contentsOf: Array(repeating: .increment, count: batch)).upperBound)")
      }
      sent += batch
    }
    try store.close()
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
  default:
    FileHandle.standardError.write(Data("unknown command \(command)\n".utf8))
    exit(2)
  }
} catch {
  FileHandle.standardError.write(Data("\(error)\n".utf8))
  exit(1)
}
