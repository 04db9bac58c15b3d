import Chronicle
import ChronicleTesting
import Foundation
import IssueReporting
import Synchronization

// MARK: - Reducers under test

/// A counter with effects of every kind.
struct Counter: Reducer {
  struct State: Codable, Sendable, Equatable {
    var count = 0
    var isLoading = false
  }
  enum Action: Codable, Sendable, Equatable {
    case increment, decrement, set(Int), noop
    case fetch, loaded(Int)
    case incrementTwice
    case startTimer, stopTimer, tick
    case failingEffect
  }
  static let timerID = "timer"

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .decrement: state.count -= 1
    case .set(let value): state.count = value
    case .noop: break
    case .fetch:
      state.isLoading = true
      return .run { send in
        try await Task.sleep(for: .milliseconds(5))
        send(.loaded(42))
      }
    case .loaded(let value):
      state.isLoading = false
      state.count = value
    case .incrementTwice:
      return .merge(.send(.increment), .send(.increment))
    case .startTimer:
      return .run { send in
        try await Task.sleep(for: .seconds(60))
        send(.tick)
      }
      .cancellable(id: Self.timerID)
    case .stopTimer:
      return .cancel(id: Self.timerID)
    case .tick:
      state.count += 100
    case .failingEffect:
      return .run { _ in throw NetworkDown() }
    }
    return .none
  }
}

struct NetworkDown: Error, CustomStringConvertible {
  var description: String { "the network is down" }
}

/// Jenny and Donald's accounts, with a rule against overdrafts.
struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable { var balances: [String: Int] = [:] }
  enum Action: Codable, Sendable, Equatable {
    case deposit(String, cents: Int)
    case withdraw(String, cents: Int)
    case transfer(from: String, to: String, cents: Int)
  }
  static let noOverdraft = Validator<State>("no account may go below zero") { state in
    state.balances.values.allSatisfy { $0 >= 0 }
  }
  static let noWhales = Validator<State>("no account may hold a million") { state in
    state.balances.values.allSatisfy { $0 < 100_000_000 }
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .deposit(let account, let cents): state.balances[account, default: 0] += cents
    case .withdraw(let account, let cents): state.balances[account, default: 0] -= cents
    case .transfer(let from, let to, let cents):
      state.balances[from, default: 0] -= cents
      state.balances[to, default: 0] += cents
    }
    return .none
  }
}

/// Hands out increasing numbers: outside state no reducer may read.
final class TicketMachine: Sendable {
  private let last = Mutex(0)
  func take() -> Int {
    last.withLock {
      $0 += 1
      return $0
    }
  }
}

/// A reducer that breaks the rule: `.stamp` reads a ticket machine, so replay gives another number.
struct Stamper: Reducer {
  struct State: Codable, Sendable, Equatable {
    var total = 0
    var stamp = 0
  }
  enum Action: Codable, Sendable, Equatable { case add(Int), stamp }
  let machine: TicketMachine

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .add(let value): state.total += value
    case .stamp: state.stamp = machine.take()
    }
    return .none
  }
}

/// A shop whose middleware tracks purchases and prints receipts.
struct Shop: Reducer {
  struct State: Codable, Sendable, Equatable {
    var basket: [String] = []
    var receipts = 0
  }
  enum Action: Codable, Sendable, Equatable { case purchase(String), receiptPrinted, browse }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .purchase(let item): state.basket.append(item)
    case .receiptPrinted: state.receipts += 1
    case .browse: break
    }
    return .none
  }

  /// Middleware that records an analytics event per purchase.
  static func analytics(_ events: Recorder<String>) -> SideEffect<State, Action> {
    SideEffect<State, Action> { state, action in
      guard case .purchase(let item) = action else { return }
      events.append("purchase \(item), basket of \(state.basket.count)")
    }
  }

  /// Middleware that prints a receipt (asynchronously) after each purchase.
  static let printer = SideEffect<State, Action>(returning: { _, action in
    guard case .purchase = action else { return .none }
    return .run { send in
      try await Task.sleep(for: .milliseconds(2))
      send(.receiptPrinted)
    }
  })
}

// MARK: - Helpers

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
  private let storage = Mutex<[Value]>([])
  func append(_ value: Value) { storage.withLock { $0.append(value) } }
  var values: [Value] { storage.withLock { $0 } }
}

/// A fresh directory for a log, removed by `remove()`.
struct TemporaryDirectory {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "chronicle-testing-tests-\(UUID().uuidString)")
  func remove() { try? FileManager.default.removeItem(at: url) }
}

/// An issue a test store reported.
struct ReportedIssue: Sendable {
  var message: String
  var fileID: String
  var line: UInt
}

/// An issue reporter that keeps what it is told instead of failing the test:
/// how an XCTest test checks the failures of a test store on every platform
/// (XCTest on Linux has no `XCTExpectFailure`).
final class IssueCollector: IssueReporter {
  private let issues = Mutex<[ReportedIssue]>([])

  var reported: [ReportedIssue] { issues.withLock { $0 } }

  func reportIssue(
    _ message: @autoclosure () -> String?, severity: IssueSeverity, fileID: StaticString, filePath: StaticString,
    line: UInt, column: UInt
  ) {
    let issue = ReportedIssue(message: message() ?? "", fileID: "\(fileID)", line: line)
    issues.withLock { $0.append(issue) }
  }
}

/// Runs `body` with a collector as the only issue reporter and returns what it collected.
func collectIssues(_ body: () async -> Void) async -> [ReportedIssue] {
  let collector = IssueCollector()
  await withIssueReporters([collector]) { await body() }
  return collector.reported
}
