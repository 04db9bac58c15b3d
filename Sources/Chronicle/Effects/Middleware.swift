/// Code that sees every accepted action after the reducer ran, with the new
/// state: logging, analytics, cross-cutting rules. It runs after the entry is
/// committed and observers were told, and may return an effect.
///
/// ```swift
/// struct Analytics: Middleware {
///   func run(state: Counter.State, action: Counter.Action) -> Effect<Counter.Action> {
///     track("\(action)", count: state.count)
///     return .none
///   }
/// }
/// ```
public protocol Middleware<State, Action>: Sendable {
  /// The store's state.
  associatedtype State: Sendable
  /// The store's action.
  associatedtype Action: Sendable

  /// Called once per committed action with the state after it.
  func run(state: State, action: Action) -> Effect<Action>
}
