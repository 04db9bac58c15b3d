import Chronicle

/// The reducer of a ``Navigation``: applies each ``NavigationAction`` (see
/// ``Navigation/apply(_:)``). It has no effects.
///
/// On its own it runs a store whose whole state is navigation (handy in tests);
/// an app composes it into its own reducer with ``Chronicle/Reducer/navigation(_:action:)``.
///
/// ```swift
/// let store = try Store(initialState: Navigation<Screen>(), reducer: NavigationReducer<Screen>())
/// try store.send(.push(.accounts))
/// ```
public struct NavigationReducer<Route: Codable & Hashable & Sendable>: Reducer {
  /// The reducer.
  public init() {}

  /// Applies `action` to `state`.
  public func reduce(into state: inout Navigation<Route>, action: NavigationAction<Route>)
    -> Effect<NavigationAction<Route>>
  {
    state.apply(action)
    return .none
  }
}

extension Reducer {
  /// This reducer with navigation composed in: an action that `action` maps to
  /// a ``NavigationAction`` is applied to the ``Navigation`` at `state` first,
  /// then this reducer runs with the same action (to react to a screen being
  /// opened, for example by loading what it shows).
  ///
  /// ```swift
  /// struct App: Reducer {
  ///   struct State: Codable, Sendable, Equatable {
  ///     var navigation = Navigation<Screen>()
  ///     var user: String?
  ///   }
  ///   enum Action: Codable, Sendable, Equatable {
  ///     case navigation(NavigationAction<Screen>)
  ///     case signIn(String)
  ///     case signOut
  ///   }
  ///   func reduce(into state: inout State, action: Action) -> Effect<Action> {
  ///     switch action {
  ///     case .navigation: break                      // applied by the composition
  ///     case .signIn(let user): state.user = user
  ///     case .signOut:
  ///       state.user = nil
  ///       state.navigation.apply(.root)             // no screen that needs a user stays open
  ///     }
  ///     return .none
  ///   }
  /// }
  ///
  /// let reducer = App().navigation(\.navigation) { action in
  ///   if case .navigation(let navigation) = action { navigation } else { nil }
  /// }
  /// ```
  public func navigation<Route>(
    _ state: WritableKeyPath<State, Navigation<Route>> & Sendable,
    action toNavigation: @escaping @Sendable (Action) -> NavigationAction<Route>?
  ) -> NavigatingReducer<Self, Route> {
    NavigatingReducer(base: self, navigation: state, toNavigation: toNavigation)
  }
}
