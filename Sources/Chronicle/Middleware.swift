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

/// A rule every state must satisfy; an action whose resulting state breaks it is rejected.
///
/// ```swift
/// Validator<Ledger.State>("no account may go below zero") { state in
///   state.balances.values.allSatisfy { $0 >= 0 }
/// }
/// ```
/// A rejected action is not logged, the state does not change, and `send`
/// throws ``ChronicleError/rejected(reason:)`` with this validator's reason.
public struct Validator<State>: Sendable {
  /// Why a state is refused, reported to the sender.
  public let reason: String
  @usableFromInline let isValid: @Sendable (State) -> Bool

  /// Creates a validator.
  public init(_ reason: String, _ isValid: @escaping @Sendable (State) -> Bool) {
    self.reason = reason
    self.isValid = isValid
  }

  /// Whether `state` satisfies the rule.
  public func validate(_ state: State) -> Bool { isValid(state) }
}
