import Chronicle

/// A small audit ledger: accounts, deposits and transfers, never overdrawn.
struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable {
    var balances: [String: Int] = [:]
    var transfers = 0

    /// All the money in the ledger: transfers never change it.
    var total: Int { balances.values.reduce(0, +) }
  }

  enum Action: Codable, Sendable, Equatable {
    case open(account: String)
    case deposit(account: String, cents: Int)
    case transfer(from: String, to: String, cents: Int)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .open(let account):
      state.balances[account] = state.balances[account] ?? 0
    case .deposit(let account, let cents):
      state.balances[account, default: 0] += cents
    case .transfer(let from, let to, let cents):
      state.balances[from, default: 0] -= cents
      state.balances[to, default: 0] += cents
      state.transfers += 1
    }
    return .none
  }

  static let validators = [
    Validator<State>("no account may be overdrawn") { state in state.balances.values.allSatisfy { $0 >= 0 } }
  ]
}

extension Ledger.State {
  /// `jenny 12.00  donald 3.50`
  var summary: String {
    balances.keys.sorted().map { "\($0) " + String(format: "%.2f", Double(balances[$0]!) / 100) }.joined(separator: "  ")
  }
}
