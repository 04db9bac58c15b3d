import Chronicle
import ChronicleNavigation
import LogToolKit

/// A small audit ledger: accounts, deposits and transfers, never overdrawn, and
/// the screens the teller opens.
/// The demo runs it; `ledger-tool` replays its log.
public struct Ledger: Reducer {
  /// Balances in cents, and how many transfers were made.
  public struct State: Codable, Sendable, Equatable {
    /// Each account's balance in cents.
    public var balances: [String: Int] = [:]
    /// Transfers made so far.
    public var transfers = 0
    /// The screens the teller has open.
    public var navigation = Navigation<Screen>()

    /// An empty ledger.
    public init() {}

    /// All the money in the ledger: transfers never change it.
    public var total: Int { balances.values.reduce(0, +) }
  }

  /// What tellers and customers do.
  public enum Action: Codable, Sendable, Equatable {
    /// Opens an account with a zero balance.
    case open(account: String)
    /// Adds money to an account.
    case deposit(account: String, cents: Int)
    /// Moves money between accounts.
    case transfer(from: String, to: String, cents: Int)
    /// Opens or closes a screen of the teller's app.
    case navigation(NavigationAction<Screen>)
  }

  /// The screens of the teller's app: navigation is logged like every other action.
  public enum Screen: Codable, Hashable, Sendable {
    /// The list of accounts.
    case accounts
    /// One account's balance and history.
    case account(String)
    /// The transfer form, from an account.
    case transfer(from: String)
  }

  /// The ledger.
  public init() {}

  /// Applies an action.
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .open(let account):
      state.balances[account] = state.balances[account] ?? 0
    case .deposit(let account, let cents):
      state.balances[account, default: 0] += cents
    case .transfer(let from, let to, let cents):
      state.balances[from, default: 0] -= cents
      state.balances[to, default: 0] += cents
      state.transfers += 1
    case .navigation(let action):
      state.navigation.apply(action)
    }
    return .none
  }

  /// The ledger's rule: no account may be overdrawn.
  public static let validators = [
    Validator<State>("no account may be overdrawn") { state in state.balances.values.allSatisfy { $0 >= 0 } },
    Validator<State>.routes("only an open account has screens", in: \.navigation) { route, state in
      switch route {
      case .accounts: true
      case .account(let account), .transfer(let account): state.balances[account] != nil
      }
    },
  ]
}

extension Ledger.Action: NamedAction {
  /// The log's type names: `open`, `deposit`, `transfer`, and `navigation.push`, `navigation.dismiss`, ….
  public var actionTypeName: String {
    switch self {
    case .open: "open"
    case .deposit: "deposit"
    case .transfer: "transfer"
    case .navigation(let action): action.actionTypeName
    }
  }
}

extension Ledger.State {
  /// `donald 3.50  jenny 12.00`
  public var summary: String {
    balances.keys.sorted().map { "\($0) " + String(format: "%.2f", Double(balances[$0]!) / 100) }.joined(separator: "  ")
  }
}

/// What `ledger-tool` needs to replay the demo's log.
public enum LedgerApp: ReplayableApp {
  /// The ledger.
  public static var reducer: Ledger { Ledger() }
  /// An empty ledger.
  public static var initialState: Ledger.State { Ledger.State() }
}
