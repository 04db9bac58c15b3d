import Synchronization

#if canImport(Observation)
  import Observation
#endif

/// Ends a subscription when cancelled or released.
///
/// ```swift
/// let token = store.subscribe { new, old in print(old.count, "→", new.count) }
/// …
/// token.cancel()
/// ```
public final class Subscription: Sendable {
  private let onCancel: Mutex<(@Sendable () -> Void)?>

  init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }

  /// Ends the subscription. Idempotent.
  public func cancel() {
    let action = onCancel.withLock { action in
      defer { action = nil }
      return action
    }
    action?()
  }

  deinit { cancel() }
}

extension Store {
  /// Adds an observer with a new id. Under the writer lock, so that every
  /// commit either sees the observer (and keeps the states it needs for it) or
  /// is entirely before it.
  private func register(_ add: (inout Shared, Int) -> Void) -> Int {
    writer.withLock { _ in
      shared.withLock { shared in
        let id = shared.nextID
        shared.nextID += 1
        add(&shared, id)
        return id
      }
    }
  }

  /// Calls `observer` with the new and the old state after every committed
  /// change, in log order. Keep the returned token: releasing it ends the subscription.
  public func subscribe(_ observer: @escaping @Sendable (_ new: State, _ old: State) -> Void) -> Subscription {
    let id = register { shared, id in shared.subscribers.append((id, observer)) }
    return Subscription { [weak self] in self?.shared.withLock { $0.subscribers.removeAll { $0.id == id } } }
  }

  /// The current state, then every new state once, in log order.
  ///
  /// ```swift
  /// for await state in store.states { render(state) }
  /// ```
  public var states: AsyncStream<State> {
    AsyncStream { continuation in
      let current = shared.withLock { $0.state }
      continuation.yield(current)
      let subscription = subscribe { new, _ in continuation.yield(new) }
      continuation.onTermination = { _ in subscription.cancel() }
    }
  }
}

/// One committed entry as observers of commits see it (for test and debugging tools).
public struct Commit<State: Sendable, Action: Sendable>: Sendable {
  @usableFromInline
  init(seq: UInt64, action: Action?, isFromEffect: Bool, old: State, new: State) {
    self.seq = seq
    self.action = action
    self.isFromEffect = isFromEffect
    self.old = old
    self.new = new
  }

  /// The entry's sequence number.
  public var seq: UInt64
  /// The action, or `nil` for restore, undo and redo entries.
  public var action: Action?
  /// Whether an effect (or middleware) sent the action.
  public var isFromEffect: Bool
  /// The state before the entry.
  public var old: State
  /// The state after it.
  public var new: State
}

extension Store {
  /// Calls `observer` for every committed entry, in log order, before state
  /// subscribers are called: the hook test stores and debuggers build on.
  public func observeCommits(_ observer: @escaping @Sendable (Commit<State, Action>) -> Void) -> Subscription {
    let id = register { shared, id in shared.commitObservers.append((id, observer)) }
    return Subscription { [weak self] in self?.shared.withLock { $0.commitObservers.removeAll { $0.id == id } } }
  }
}

#if canImport(Observation)
  /// Bridges the store to the Observation framework (SwiftUI reads `store.state`).
  struct ObservationSupport<Subject: Observable>: @unchecked Sendable {
    // Sound: the registrar is Sendable; the key path names a computed property
    // without captured values and is never mutated.
    let registrar = ObservationRegistrar()
    /// Built once: forming a key path of a generic type at run time is costly.
    let keyPath: KeyPath<Subject, Int>
  }

  extension Store: Observable {
    /// The property observers of `state` are registered under.
    var observationToken: Int { 0 }

    static func makeObservation() -> ObservationSupport<Store> {
      ObservationSupport(keyPath: \Store.observationToken)
    }

    func observationAccess() { observation.registrar.access(self, keyPath: observation.keyPath) }

    @usableFromInline
    func observationChanged() {
      observation.registrar.willSet(self, keyPath: observation.keyPath)
      observation.registrar.didSet(self, keyPath: observation.keyPath)
    }
  }
#else
  /// Where the Observation framework does not exist: nothing to bridge.
  struct ObservationSupport<Subject>: Sendable {}

  extension Store {
    static func makeObservation() -> ObservationSupport<Store> { ObservationSupport() }
    func observationAccess() {}
    @usableFromInline
    func observationChanged() {}
  }
#endif
