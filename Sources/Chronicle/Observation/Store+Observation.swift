import Synchronization

import Observation

extension Store {
  /// Adds an observer with a new id. Under the writer lock, so that every
  /// commit either sees the observer (and keeps the states it needs for it) or
  /// is entirely before it.
  private func register(_ add: (inout Shared, Int) -> Void) -> Int {
    // Once every staged send is committed: those were staged without the states an observer needs.
    let (id, failures) = withCommittedWriter { _ in
      shared.withLock { shared in
        let id = shared.nextID
        shared.nextID += 1
        add(&shared, id)
        return id
      }
    }
    if !failures.isEmpty { reportBackgroundErrors(failures) }
    drain()
    return id
  }

  /// Calls `observer` with the new and the old state after every committed
  /// change, in log order. Keep the returned token: releasing it ends the subscription.
  ///
  /// `observer` runs on the thread that committed the change, before `send`
  /// returns there (an effect's thread, for actions effects send). To update UI,
  /// observe `state` through SwiftUI or the Observation framework (delivered on
  /// the main actor), or iterate ``states`` in a `@MainActor` task.
  public func subscribe(_ observer: @escaping @Sendable (_ new: State, _ old: State) -> Void) -> Subscription {
    let id = register { shared, id in shared.subscribers.append((id, observer)) }
    return Subscription { [weak self] in self?.shared.withLock { $0.subscribers.removeAll { $0.id == id } } }
  }

  /// The current state, then every new state once, in log order.
  ///
  /// The stream delivers to the task that iterates it: iterate it in a
  /// `@MainActor` task to update UI.
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

extension Store {
  /// Calls `observer` for every committed entry, in log order, before state
  /// subscribers are called: the hook test stores and debuggers build on.
  public func observeCommits(_ observer: @escaping @Sendable (Commit<State, Action>) -> Void) -> Subscription {
    let id = register { shared, id in shared.commitObservers.append((id, observer)) }
    return Subscription { [weak self] in self?.shared.withLock { $0.commitObservers.removeAll { $0.id == id } } }
  }
}

// MARK: - Observation framework

/// SwiftUI views, and `withObservationTracking`, that read ``Store/state``,
/// ``Store/canUndo`` or ``Store/canRedo`` are told of every committed change,
/// where ``StoreOptions/observationDelivery`` says (the main actor by default).
extension Store: Observable {
  static func makeObservation() -> StoreObservation { StoreObservation() }

  func observationAccess() { observation.notifier.access() }

  /// Announces a committed change to the store's observers, then lets its
  /// scoped stores announce theirs if their part changed. Called after every commit.
  @usableFromInline
  func observationChanged() {
    let observation = observation
    // Nothing ever read the state (so no observer is registered) and no scoped store checks its
    // part: nothing to announce, and no need to ask which thread this is (a system call on Linux).
    guard observation.notifier.wasAccessed || !observation.children.isEmpty else { return }
    observation.notifier.schedule(options.observationDelivery) {
      observation.notifier.announce()
      observation.children.rootChanged()
    }
  }
}
