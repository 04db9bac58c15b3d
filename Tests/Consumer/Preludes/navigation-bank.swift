// The guide's `Bank` app (section 13, navigation), for the testing guide's navigation test.
import Chronicle
import ChronicleNavigation

private enum Screen: Codable, Hashable, Sendable {
  case accounts
  case account(String)
  case settings
}

private struct Bank: Reducer {
  struct State: Codable, Sendable, Equatable {
    var navigation = Navigation<Screen>()
    var user: String?
    var selectedAccount: String?
  }
  enum Action: Codable, Sendable, Equatable {
    case navigation(NavigationAction<Screen>)
    case signIn(String)
    case signOut
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .navigation(.push(.account(let id))): state.selectedAccount = id
    case .navigation: break
    case .signIn(let user): state.user = user
    case .signOut:
      state.user = nil
      state.navigation.apply(.root)
    }
    return .none
  }

  static let reducer = Bank().navigation(\.navigation) { action in
    if case .navigation(let navigation) = action { navigation } else { nil }
  }

  static let signedIn = Validator<State>.routes("account screens need a signed-in user", in: \.navigation) {
    route, state in
    if case .account = route { state.user != nil } else { true }
  }
}

// SNIPPET
