import Chronicle

// MARK: - The ledger

/// Jenny and Donald's accounts, as in the demo, with rules against overdrafts and whales.
public struct Ledger: Reducer {
  /// Every account's balance in cents.
  public struct State: Codable, Sendable, Equatable {
    /// The balances, by account.
    public var balances: [String: Int]

    /// A ledger; empty by default.
    public init(balances: [String: Int] = [:]) { self.balances = balances }
  }

  /// What the ledger does.
  public enum Action: Codable, Sendable, Equatable {
    /// Opens an account with nothing in it.
    case open(String)
    /// Adds money to an account.
    case deposit(String, cents: Int)
    /// Takes money from an account.
    case withdraw(String, cents: Int)
    /// Moves money between accounts.
    case transfer(from: String, to: String, cents: Int)
  }

  /// No account may go below zero.
  public static let noOverdraft = Validator<State>("no account may go below zero") { state in
    state.balances.values.allSatisfy { $0 >= 0 }
  }

  /// No account may hold a million.
  public static let noWhales = Validator<State>("no account may hold a million") { state in
    state.balances.values.allSatisfy { $0 < 100_000_000 }
  }

  /// A ledger.
  public init() {}

  /// Applies `action`.
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .open(let account): state.balances[account, default: 0] += 0
    case .deposit(let account, let cents): state.balances[account, default: 0] += cents
    case .withdraw(let account, let cents): state.balances[account, default: 0] -= cents
    case .transfer(let from, let to, let cents):
      state.balances[from, default: 0] -= cents
      state.balances[to, default: 0] += cents
    }
    return .none
  }
}
