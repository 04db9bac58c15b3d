import Chronicle

extension Validator {
  /// A validator that refuses any state in which a route the rule disallows is
  /// open (in the stack, the sheet or the cover): sending the action that would
  /// open it throws ``/Chronicle/ChronicleError/rejected(reason:)``, and nothing is logged.
  ///
  /// ```swift
  /// let signedIn = Validator<App.State>.routes("account screens need a signed-in user", in: \.navigation) {
  ///   route, state in
  ///   if case .account = route { state.user != nil } else { true }
  /// }
  /// ```
  ///
  /// As every validator, it checks the state after each action: an action
  /// that would leave a disallowed route open (signing out while an account
  /// screen is shown) is refused too, unless it also navigates away.
  public static func routes<Route>(
    _ reason: String, in navigation: KeyPath<State, Navigation<Route>> & Sendable,
    allowing isAllowed: @escaping @Sendable (_ route: Route, _ state: State) -> Bool
  ) -> Validator<State> {
    Validator(reason) { state in
      state[keyPath: navigation].routes.allSatisfy { isAllowed($0, state) }
    }
  }
}
