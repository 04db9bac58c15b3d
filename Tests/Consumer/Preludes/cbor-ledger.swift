// A ledger whose actions the block encodes by hand.
import Chronicle

private struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable { var balances: [String: Int] = [:] }
  enum Action: Codable, Sendable, Equatable { case deposit(String, cents: Int), close }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    if case .deposit(let account, let cents) = action { state.balances[account, default: 0] += cents }
    return .none
  }
}

// SNIPPET
