import Chronicle
import Foundation
import Synchronization

/// The counter of the guide, with a fetch effect.
struct Counter: Reducer {
  struct State: Codable, Sendable, Equatable { var count = 0; var isLoading = false }
  enum Action: Codable, Sendable, Equatable {
    case increment, decrement, reset, set(Int)
    case fetch, loaded(Int)
    case incrementTwiceLater
    case failingEffect
  }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .decrement: state.count -= 1
    case .reset: state.count = 0
    case .set(let value): state.count = value
    case .fetch:
      state.isLoading = true
      return .run { send in
        try await Task.sleep(for: .milliseconds(5))
        send(.loaded(42))
      }
    case .loaded(let value):
      state.isLoading = false
      state.count = value
    case .incrementTwiceLater:
      return .merge(.send(.increment), .send(.increment))
    case .failingEffect:
      return .run { _ in throw TestFailure(message: "the network is down") }
    }
    return .none
  }
}

struct TestFailure: Error, CustomStringConvertible {
  var message: String
  var description: String { message }
}

/// A two-account ledger, as in the demo.
struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable { var balances: [String: Int] = [:] }
  enum Action: Codable, Sendable, Equatable {
    case open(String)
    case deposit(String, cents: Int)
    case transfer(from: String, to: String, cents: Int)
  }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .open(let account): state.balances[account, default: 0] += 0
    case .deposit(let account, let cents): state.balances[account, default: 0] += cents
    case .transfer(let from, let to, let cents):
      state.balances[from, default: 0] -= cents
      state.balances[to, default: 0] += cents
    }
    return .none
  }
  static let noOverdraft = Validator<State>("no account may go below zero") { $0.balances.values.allSatisfy { $0 >= 0 } }
}

/// A fresh directory for a log.
struct TemporaryDirectory {
  let url: URL
  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("chronicle-store-tests-\(UUID().uuidString)")
  }
  func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Collects values from any thread.
final class Recorder<Value: Sendable>: Sendable {
  private let storage = Mutex<[Value]>([])
  func append(_ value: Value) { storage.withLock { $0.append(value) } }
  var values: [Value] { storage.withLock { $0 } }
}

/// Runs the test helper `chronicle-probe`.
func probeURL() -> URL {
  Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("chronicle-probe")
}
