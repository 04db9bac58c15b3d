import Chronicle

/// An app's reducer with navigation composed in; made by ``Chronicle/Reducer/navigation(_:action:)``.
public struct NavigatingReducer<Base: Reducer, Route: Codable & Hashable & Sendable>: Reducer {
  let base: Base
  let navigation: WritableKeyPath<Base.State, Navigation<Route>> & Sendable
  let toNavigation: @Sendable (Base.Action) -> NavigationAction<Route>?

  /// Applies the navigation part of `action`, if any, then the app's reducer.
  public func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    if let navigationAction = toNavigation(action) { state[keyPath: navigation].apply(navigationAction) }
    return base.reduce(into: &state, action: action)
  }
}
