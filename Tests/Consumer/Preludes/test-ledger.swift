// A ledger with a no-overdraft validator, as a test would use it.
import ChronicleTesting
import Foundation

private struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable { var balances: [String: Int] = [:] }
  enum Action: Codable, Sendable, Equatable { case deposit(String, cents: Int), withdraw(String, cents: Int) }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .deposit(let account, let cents): state.balances[account, default: 0] += cents
    case .withdraw(let account, let cents): state.balances[account, default: 0] -= cents
    }
    return .none
  }
  static let noOverdraft = Validator<State>("no account may go below zero") { $0.balances.values.allSatisfy { $0 >= 0 } }
}

private func snippet(url: URL) async throws {
// SNIPPET
}
