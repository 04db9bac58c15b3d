/// Sends actions from a running effect back into the store.
///
/// Call it like a function: `send(.loaded(value))`. It is synchronous: it returns
/// once the action is committed, so it takes no `await` (writing `await send(…)`,
/// as in TCA, compiles with a "no 'async' operations" warning). Sending after the
/// store closed, or an action a validator rejects, is reported to the store's
/// effect error handler.
///
/// ```swift
/// return .run { send in
///   let count = try await api.fetchCount()   // await the work…
///   send(.loaded(count))                     // …not the send
/// }
/// ```
public struct Send<Action: Sendable>: Sendable {
  let body: @Sendable (Action) -> Void

  /// Wraps a closure that delivers actions.
  public init(_ body: @escaping @Sendable (Action) -> Void) { self.body = body }

  /// Sends `action`.
  public func callAsFunction(_ action: Action) { body(action) }
}
