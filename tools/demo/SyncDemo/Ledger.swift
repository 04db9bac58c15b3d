#if Postgres
import Chronicle
import Foundation

/// The team's ledger: accounts that take deposits and withdrawals and may never go below zero.
/// (The tour's `DemoLedger` has transfers and screens, and needs the LogTool trait.)
struct Ledger: Reducer {
  struct State: Codable, Sendable, Equatable {
    /// Each account's balance in cents.
    var balances: [String: Int] = [:]
  }

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

  /// The ledger's rule, checked at every send and again when a device's actions are rebased.
  static let noOverdraft = Validator<State>("no account may go below zero") { state in
    state.balances.values.allSatisfy { $0 >= 0 }
  }
}

/// `100.00`
func money(_ cents: Int) -> String {
  let hundredths = abs(cents) % 100
  return "\(cents < 0 ? "-" : "")\(abs(cents) / 100).\(hundredths < 10 ? "0" : "")\(hundredths)"
}

extension Ledger.Action {
  /// `withdraw 50.00 from petty cash`
  var summary: String {
    switch self {
    case .deposit(let account, let cents): "deposit \(money(cents)) into \(account)"
    case .withdraw(let account, let cents): "withdraw \(money(cents)) from \(account)"
    }
  }
}

extension Ledger.State {
  /// `petty cash 30.00`
  var summary: String {
    balances.isEmpty
      ? "no accounts" : balances.keys.sorted().map { "\($0) \(money(balances[$0]!))" }.joined(separator: ", ")
  }
}
#endif  // Postgres
