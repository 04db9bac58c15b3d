/// The rules of an app: how an action changes the state, and what work follows.
///
/// ```swift
/// struct Counter: Reducer {
///   struct State: Codable, Sendable, Equatable { var count = 0 }
///   enum Action: Codable, Sendable, Equatable { case increment, decrement, reset, set(Int) }
///   func reduce(into state: inout State, action: Action) -> Effect<Action> {
///     switch action {
///     case .increment: state.count += 1
///     case .decrement: state.count -= 1
///     case .reset: state.count = 0
///     case .set(let value): state.count = value
///     }
///     return .none
///   }
/// }
/// ```
///
/// A reducer must be **deterministic**: recovery and time travel run it again
/// over the logged actions and must reach the same state. What it needs from
/// the world (the time, fresh identifiers, random numbers) must arrive inside
/// the action, decided by the caller or an effect, never be read in `reduce`.
public protocol Reducer<State, Action>: Sendable {
  /// The state the reducer changes. Encoded into snapshots.
  associatedtype State: Codable & Sendable
  /// The actions it understands. Every accepted action is encoded into the log.
  associatedtype Action: Codable & Sendable

  /// Applies `action` to `state` and returns the work to do afterwards.
  func reduce(into state: inout State, action: Action) -> Effect<Action>
}
