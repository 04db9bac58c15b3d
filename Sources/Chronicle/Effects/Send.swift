/// Sends actions from a running effect back into the store.
///
/// Call it like a function: `send(.loaded(value))`. Sending after the store
/// closed, or an action a validator rejects, is reported to the store's effect
/// error handler.
public struct Send<Action: Sendable>: Sendable {
  let body: @Sendable (Action) -> Void

  /// Wraps a closure that delivers actions.
  public init(_ body: @escaping @Sendable (Action) -> Void) { self.body = body }

  /// Sends `action`.
  public func callAsFunction(_ action: Action) { body(action) }
}
