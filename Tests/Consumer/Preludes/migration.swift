// A ledger whose version 2 renamed and removed actions of version 1.
import Chronicle
import Foundation

private enum ActionV1: Decodable, Sendable { case add(Int), clear, legacyBonus }

private struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable { var total = 0 }
  enum Action: Codable, Sendable, Equatable { case deposit(amount: Int, memo: String?), clear }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .deposit(let amount, _): state.total += amount
    case .clear: state.total = 0
    }
    return .none
  }
}

private func snippet(url: URL) async throws {
// SNIPPET
}
