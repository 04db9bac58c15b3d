// Every error-handling idiom the documentation shows, compiled as an app
// compiles it (`swift build -c release`) and run. Each idiom prints one line;
// the process exits with status 1 if any idiom did not catch what it should.

import Chronicle
import Foundation

// MARK: - The app

struct Counter: Reducer {
  struct State: Codable, Sendable, Equatable { var count = 0 }
  enum Action: Codable, Sendable, Equatable { case increment, decrement }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .decrement: state.count -= 1
    }
    return .none
  }
}

let neverBelowZero = Validator<Counter.State>("the count may not go below zero") { $0.count >= 0 }
var failures = 0

@MainActor func check(_ idiom: String, _ outcome: String?) {
  if let outcome {
    print("\(idiom): \(outcome)")
  } else {
    print("\(idiom): NOT CAUGHT")
    failures += 1
  }
}

// MARK: - ChronicleError in functions

/// The reproduction of the release-build compiler crash: a pattern catch
/// after a `do` body that ends in a call returning `Never`.
func rejection(_ store: Store<Counter.State, Counter.Action>) throws -> String {
  do {
    try store.send(.decrement)
    fatalError("the validator accepted a negative count")
  } catch ChronicleError.rejected(let reason) {
    return reason
  }
}

func boundError(_ store: Store<Counter.State, Counter.Action>) -> String? {
  do {
    try store.send(.decrement)
    return nil
  } catch let error as ChronicleError {
    return error.localizedDescription
  } catch {
    return nil
  }
}

func typeCheck(_ store: Store<Counter.State, Counter.Action>) -> String? {
  do {
    try store.send(.decrement)
    return nil
  } catch is ChronicleError {
    return "a ChronicleError"
  } catch {
    return nil
  }
}

func emptyBatch(_ store: Store<Counter.State, Counter.Action>) -> String? {
  do {
    try store.send(contentsOf: [Counter.Action]())
    return nil
  } catch ChronicleError.emptyBatch {
    return "\(ChronicleError.emptyBatch)"
  } catch {
    return nil
  }
}

// MARK: - ChronicleError in top-level code

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chronicle-consumer-\(UUID().uuidString)")

let store = try Store(
  initialState: Counter.State(), reducer: Counter(), log: .directory(directory), validators: [neverBelowZero])

check("catch ChronicleError.rejected(let reason) after a Never call", try rejection(store))
check("catch let error as ChronicleError", boundError(store))
check("catch is ChronicleError", typeCheck(store))
check("catch ChronicleError.emptyBatch", emptyBatch(store))

var topLevel: String?
do {
  try store.send(.decrement)
  fatalError("the validator accepted a negative count")
} catch ChronicleError.rejected(let reason) {
  topLevel = reason
}
check("top-level catch ChronicleError.rejected(let reason)", topLevel)

var switched: String?
for attempt in [Counter.Action.decrement] {
  switch attempt {
  case .decrement:
    do {
      try store.send(attempt)
      fatalError("the validator accepted a negative count")
    } catch ChronicleError.rejected(let reason) {
      switched = reason
    } catch let error as ChronicleError {
      switched = "unexpected \(error)"
    }
  case .increment:
    break
  }
}
check("catch ChronicleError.rejected inside a switch", switched)

var matched: String?
do {
  try store.send(.decrement)
} catch {
  switch error {
  case ChronicleError.rejected(let reason): matched = reason
  case let error as ChronicleError: matched = "unexpected \(error)"
  default: matched = "unexpected \(error)"
  }
}
check("switch error { case ChronicleError.rejected(let reason) }", matched)

// MARK: - LogError

/// A second writer of the same log.
func secondWriter(_ url: URL) throws -> String {
  do {
    _ = try ActionLog(directory: url)
    fatalError("a second writer opened a locked log")
  } catch LogError.locked(let path) {
    return "locked: \(path.hasSuffix(url.lastPathComponent))"
  }
}

check("catch LogError.locked(let path) after a Never call", try secondWriter(directory))

let missing = directory.appendingPathComponent("missing")
var logTopLevel: String?
do {
  _ = try ActionLog(directory: missing, access: .readOnly)
  fatalError("a missing log was opened")
} catch LogError.noSuchLog(let path) {
  logTopLevel = "no such log: \(path == missing.path)"
} catch let error as LogError {
  logTopLevel = "unexpected \(error)"
}
check("top-level catch LogError.noSuchLog(let path)", logTopLevel)

var logSwitched: String?
for access in [ActionLog.Access.readOnly] {
  switch access {
  case .readOnly:
    do {
      _ = try ActionLog(directory: missing, access: access)
    } catch is LogError {
      logSwitched = "a LogError"
    } catch {
      logSwitched = "unexpected \(error)"
    }
  case .readWrite:
    break
  }
}
check("catch is LogError inside a switch", logSwitched)

var logMatched: String?
do {
  _ = try ActionLog(directory: missing, access: .readOnly)
} catch let error as LogError {
  switch error {
  case .noSuchLog: logMatched = error.localizedDescription
  default: logMatched = "unexpected \(error)"
  }
}
check("catch let error as LogError, then switch", logMatched)

// The store wraps the log's errors: a second store on the same log.
var wrapped: String?
do {
  _ = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(directory))
} catch ChronicleError.logLocked(let path) {
  wrapped = "logLocked: \(path.hasSuffix(directory.lastPathComponent))"
} catch ChronicleError.log(let error) {
  wrapped = "unexpected \(error)"
}
check("catch ChronicleError.logLocked(let path)", wrapped)

try store.close()
try? FileManager.default.removeItem(at: directory)
if failures > 0 {
  print("\(failures) idiom(s) did not catch their error")
  exit(1)
}
print("every idiom caught its error")
