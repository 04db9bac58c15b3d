// A ledger shared by devices: the block takes a directory `url` for the device's copy and the
// stream's `server` for granted (docs/sync.md).
import Chronicle
import Foundation

private struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable { var balances: [String: Int] = [:] }
  enum Action: Codable, Sendable, Equatable {
    case deposit(account: String, cents: Int)
    case withdraw(account: String, cents: Int)
  }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .deposit(let account, let cents): state.balances[account, default: 0] += cents
    case .withdraw(let account, let cents): state.balances[account, default: 0] -= cents
    }
    return .none
  }
}

private func snippet(url: URL, server: some StreamServer) async throws {
// SNIPPET
}
