// The guide's ledger: a store of it, a log directory and the helpers the
// guide's blocks call (`Analytics`, `render`).
import Chronicle
import Foundation

private struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable {
    var balances: [String: Int] = [:]
    var total: Int { balances.values.reduce(0, +) }
  }
  enum Action: Codable, Sendable, Equatable {
    case deposit(account: String, cents: Int)
    case withdraw(account: String, cents: Int)
    case transfer(from: String, to: String, cents: Int)
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

private enum Analytics {
  static func track(_ event: String, total: Int) {}
}

private func render(_ state: Ledger.State) {}

private func snippet(store: Store<Ledger.State, Ledger.Action>, url: URL) async throws {
// SNIPPET
}
