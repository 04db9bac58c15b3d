import Chronicle
import ChronicleNavigation
import ChronicleTestSupport
import Foundation
import Testing

/// A small app with navigation composed in: accounts need a signed-in user.
struct BankApp: Reducer {
  struct State: Codable, Sendable, Equatable {
    var navigation = Navigation<Screen>()
    var user: String?
    /// The account whose screen was last on top of the stack: the app's own reducer reacting to navigation.
    var selectedAccount: String?
  }
  enum Action: Codable, Sendable, Equatable, NamedAction {
    case navigation(NavigationAction<Screen>)
    case signIn(String)
    case signOut
    /// Signs out without leaving the screen (the validator must refuse it on an account screen).
    case forgetUser

    var actionTypeName: String {
      switch self {
      case .navigation(let action): action.actionTypeName
      case .signIn: "signIn"
      case .signOut: "signOut"
      case .forgetUser: "forgetUser"
      }
    }
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .navigation:
      // The composition applied the navigation action first: the state shows the new screen.
      if case .account(let id)? = state.navigation.topRoute { state.selectedAccount = id }
    case .signIn(let user): state.user = user
    case .signOut:
      state.user = nil
      state.navigation.apply(.root)
    case .forgetUser: state.user = nil
    }
    return .none
  }

  /// The app's reducer with navigation composed in.
  static let reducer = BankApp().navigation(\.navigation) { action in
    if case .navigation(let navigation) = action { navigation } else { nil }
  }

  static let signedIn = Validator<State>.routes("account screens need a signed-in user", in: \.navigation) {
    route, state in
    switch route {
    case .account, .transfer: state.user != nil
    default: true
    }
  }
}

/// The rules of `Navigation` as a value: layers, precedence, and each action.
@Suite struct NavigationTests {
  @Test func dismissClosesTheTopmostLayerFirst() {
    var navigation = Navigation<Screen>()
    navigation.apply(.push(.accounts))
    navigation.apply(.push(.account("jenny")))
    navigation.apply(.present(.settings))
    navigation.apply(.fullScreen(.signIn))
    #expect(navigation.topLayer == .fullScreenCover)
    #expect(navigation.visibleRoute == .signIn)

    navigation.apply(.dismiss)
    #expect(navigation == Navigation(stack: [.accounts, .account("jenny")], sheet: .settings))
    #expect(navigation.topLayer == .sheet)
    navigation.apply(.dismiss)
    #expect(navigation == Navigation(stack: [.accounts, .account("jenny")]))
    #expect(navigation.topLayer == .stack)
    navigation.apply(.dismiss)
    #expect(navigation == Navigation(stack: [.accounts]))
    navigation.apply(.dismiss)
    #expect(navigation.isAtRoot)
    #expect(navigation.topLayer == nil)
    navigation.apply(.dismiss)
    #expect(navigation.isAtRoot, "dismiss at the root screen changes nothing")
  }

  @Test func aCoverOverNoSheetIsDismissedBeforeTheStack() {
    var navigation = Navigation<Screen>(stack: [.accounts], fullScreenCover: .signIn)
    navigation.apply(.dismiss)
    #expect(navigation == Navigation(stack: [.accounts]))
  }

  @Test func topRouteChecksTheStackThenTheCoverThenTheSheet() {
    #expect(Navigation<Screen>().topRoute == nil)
    #expect(Navigation<Screen>(sheet: .settings).topRoute == .settings)
    #expect(Navigation<Screen>(sheet: .settings, fullScreenCover: .signIn).topRoute == .signIn)
    #expect(Navigation<Screen>(stack: [.accounts], sheet: .settings, fullScreenCover: .signIn).topRoute == .accounts)
    // The route in front is another question, answered by visibleRoute.
    #expect(Navigation<Screen>(stack: [.accounts], sheet: .settings).visibleRoute == .settings)
    #expect(Navigation<Screen>(stack: [.accounts], sheet: .settings).topRoute == .accounts)
  }

  @Test func presentingOverASheetReplacesIt() {
    var navigation = Navigation<Screen>(stack: [.accounts], fullScreenCover: .signIn)
    navigation.apply(.present(.settings))
    navigation.apply(.present(.about))
    #expect(navigation == Navigation(stack: [.accounts], sheet: .about, fullScreenCover: .signIn))
    navigation.apply(.fullScreen(.transfer(from: "jenny")))
    #expect(navigation == Navigation(stack: [.accounts], sheet: .about, fullScreenCover: .transfer(from: "jenny")))
  }

  @Test func popPopToRootAndReplaceStack() {
    var navigation = Navigation<Screen>(stack: [.accounts, .account("a"), .about, .account("a"), .settings])
    navigation.apply(.popTo(.account("a")))
    #expect(navigation.stack == [.accounts, .account("a"), .about, .account("a")], "pops to the last occurrence")
    navigation.apply(.popTo(.signIn))
    #expect(navigation.stack == [.accounts, .account("a"), .about, .account("a")], "a route not in the stack: nothing")
    navigation.apply(.pop)
    #expect(navigation.stack == [.accounts, .account("a"), .about])
    navigation.apply(.present(.settings))
    navigation.apply(.pop)
    #expect(navigation == Navigation(stack: [.accounts, .account("a")], sheet: .settings), "pop leaves the sheet")
    navigation.apply(.replaceStack([.accounts, .account("b")]))
    #expect(navigation == Navigation(stack: [.accounts, .account("b")]), "a deep link closes the sheet")
    navigation.apply(.fullScreen(.signIn))
    navigation.apply(.root)
    #expect(navigation.isAtRoot)
    navigation.apply(.pop)
    #expect(navigation.isAtRoot)
    #expect(navigation.routes.isEmpty)
    #expect(Navigation<Screen>(stack: [.accounts], sheet: .about, fullScreenCover: .signIn).routes
      == [.accounts, .about, .signIn])
  }

  // MARK: - Coding

  static let everyAction: [NavigationAction<Screen>] = [
    .push(.account("jenny")), .pop, .popTo(.accounts), .present(.settings), .fullScreen(.transfer(from: "a")),
    .dismiss, .root, .replaceStack([.accounts, .account("b")]), .replaceStack([]),
  ]

  @Test(arguments: [PayloadCodec.json, .cbor])
  func everyActionRoundTrips(codec: PayloadCodec) throws {
    for action in Self.everyAction {
      let bytes = try codec.encode(action)
      let decoded = try bytes.withUnsafeBytes { try codec.decode(NavigationAction<Screen>.self, from: $0) }
      #expect(decoded == action)
    }
  }

  @Test func theLogShowsTheCaseAndTheRoute() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    func json(_ action: NavigationAction<Screen>) throws -> String {
      String(decoding: try encoder.encode(action), as: UTF8.self)
    }
    #expect(try json(.push(.account("jenny"))) == #"{"push":{"route":{"account":{"_0":"jenny"}}}}"#)
    #expect(try json(.dismiss) == #"{"dismiss":{}}"#)
    #expect(try json(.replaceStack([.accounts])) == #"{"replaceStack":{"routes":[{"accounts":{}}]}}"#)
    #expect(Self.everyAction.map(\.actionTypeName).prefix(8) == [
      "navigation.push", "navigation.pop", "navigation.popTo", "navigation.present", "navigation.fullScreen",
      "navigation.dismiss", "navigation.root", "navigation.replaceStack",
    ])
  }

  @Test func badPayloadsAreRefusedNamingWhatIsWrong() throws {
    let decoder = JSONDecoder()
    let unknown = #expect(throws: DecodingError.self) {
      try decoder.decode(NavigationAction<Screen>.self, from: Data(#"{"teleport":{}}"#.utf8))
    }
    #expect(String(describing: unknown).contains("unknown navigation action 'teleport'"))
    let two = #expect(throws: DecodingError.self) {
      try decoder.decode(NavigationAction<Screen>.self, from: Data(#"{"pop":{},"root":{}}"#.utf8))
    }
    #expect(String(describing: two).contains("found 2: pop, root"))
    #expect(throws: DecodingError.self) {
      try decoder.decode(NavigationAction<Screen>.self, from: Data(#"{"push":{"route":{"nowhere":{}}}}"#.utf8))
    }
    #expect(throws: DecodingError.self) {
      try decoder.decode(NavigationAction<Screen>.self, from: Data(#"{"push":{"_0":{"accounts":{}}}}"#.utf8))
    }
  }
}
