import Chronicle
import ChronicleTesting
import Foundation
import IssueReporting
import Synchronization
import ChronicleTestTools

// MARK: - Reducers under test

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
