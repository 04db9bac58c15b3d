/// Middleware from a closure.
///
/// ```swift
/// let log = SideEffect<Counter.State, Counter.Action> { state, action in print(action, state) }
/// ```
public struct SideEffect<State: Sendable, Action: Sendable>: Middleware {
  let body: @Sendable (State, Action) -> Effect<Action>

  /// Middleware that only observes.
  public init(_ body: @escaping @Sendable (State, Action) -> Void) {
    self.body = { state, action in
      body(state, action)
      return .none
    }
  }

  /// Middleware that may return an effect.
  public init(returning body: @escaping @Sendable (State, Action) -> Effect<Action>) {
    self.body = body
  }

  /// Calls the closure.
  public func run(state: State, action: Action) -> Effect<Action> { body(state, action) }
}
