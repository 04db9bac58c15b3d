/// A reducer made from a closure.
///
/// ```swift
/// let reducer = AnyReducer<Int, Bool> { count, up in count += up ? 1 : -1; return .none }
/// ```
public struct AnyReducer<State: Codable & Sendable, Action: Codable & Sendable>: Reducer {
  @usableFromInline let body: @Sendable (inout State, Action) -> Effect<Action>

  /// Wraps `body`.
  @inlinable
  public init(_ body: @escaping @Sendable (inout State, Action) -> Effect<Action>) {
    self.body = body
  }

  /// Wraps another reducer.
  @inlinable
  public init<R: Reducer>(_ reducer: R) where R.State == State, R.Action == Action {
    self.body = { reducer.reduce(into: &$0, action: $1) }
  }

  /// Calls the closure.
  @inlinable
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    body(&state, action)
  }
}
