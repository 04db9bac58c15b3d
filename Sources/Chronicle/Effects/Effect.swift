/// Work that follows an action: sending more actions, now or later.
///
/// Effects are never logged and never run during replay. The actions they
/// send back are logged as ordinary entries, flagged as coming from an effect.
///
/// ```swift
/// case .fetch:
///   state.isLoading = true
///   return .run { send in
///     let count = try await api.fetchCount()
///     send(.loaded(count))
///   }
///   .cancellable(id: "fetch", cancelInFlight: true)
/// ```
public struct Effect<Action: Sendable>: Sendable {
  indirect enum Operation: Sendable {
    case none
    case send(Action)
    case run(TaskPriority?, @Sendable (Send<Action>) async throws -> Void)
    case merge([Effect])
    case cancellable(id: EffectID, cancelInFlight: Bool, Effect)
    case cancel(id: EffectID)
  }

  let operation: Operation

  init(_ operation: Operation) { self.operation = operation }

  /// No work.
  public static var none: Effect { Effect(.none) }

  /// Sends `action` back into the store as soon as the current action is done.
  public static func send(_ action: Action) -> Effect { Effect(.send(action)) }

  /// Runs `operation` in a task; it may send any number of actions. An error it
  /// throws goes to the store's effect error handler (``StoreOptions/onEffectError``).
  public static func run(
    priority: TaskPriority? = nil, _ operation: @escaping @Sendable (Send<Action>) async throws -> Void
  ) -> Effect {
    Effect(.run(priority, operation))
  }

  /// Runs several effects at once.
  public static func merge(_ effects: Effect...) -> Effect { merge(effects) }

  /// Runs several effects at once.
  public static func merge(_ effects: [Effect]) -> Effect {
    let effects = effects.filter { if case .none = $0.operation { false } else { true } }
    return effects.isEmpty ? .none : Effect(.merge(effects))
  }

  /// Cancels the running effects marked with `id`.
  public static func cancel(id: some Hashable & Sendable) -> Effect { Effect(.cancel(id: EffectID(id))) }

  /// Marks this effect with `id` so that ``cancel(id:)`` can stop it; with
  /// `cancelInFlight`, starting it first cancels the ones already running with that id.
  public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Effect {
    Effect(.cancellable(id: EffectID(id), cancelInFlight: cancelInFlight, self))
  }

  /// Whether the effect does nothing.
  public var isNone: Bool {
    if case .none = operation { return true }
    return false
  }

  /// The same work, with its actions turned into another action type (for scoping).
  public func map<Other: Sendable>(_ transform: @escaping @Sendable (Action) -> Other) -> Effect<Other> {
    switch operation {
    case .none: .none
    case .send(let action): .send(transform(action))
    case .run(let priority, let body):
      .run(priority: priority) { send in try await body(Send { send(transform($0)) }) }
    case .merge(let effects): .merge(effects.map { $0.map(transform) })
    case .cancellable(let id, let cancelInFlight, let effect):
      Effect<Other>(.cancellable(id: id, cancelInFlight: cancelInFlight, effect.map(transform)))
    case .cancel(let id): Effect<Other>(.cancel(id: id))
    }
  }
}
