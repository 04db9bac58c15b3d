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
