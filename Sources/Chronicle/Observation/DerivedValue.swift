import Observation
import Synchronization

/// A value derived from a store's state; observers hear only real changes (`!=`).
///
/// ```swift
/// let total = store.derive { state in state.balances.values.reduce(0, +) }
/// Text("\(total.value)")   // in a SwiftUI view: redrawn only when the total changes
/// ```
///
/// `subscribe` observers run on the thread that committed the change; SwiftUI
/// and the Observation framework hear of it where the store's
/// ``StoreOptions/observationDelivery`` says (the main actor by default).
public final class DerivedValue<Value: Equatable & Sendable>: Sendable {
  private struct Storage {
    var value: Value
    var observers: [Int: @Sendable (Value, Value) -> Void] = [:]
    var nextID = 0
  }

  private let storage: Mutex<Storage>
  private let upstream = Mutex<Subscription?>(nil)
  private let notifier = ObservationNotifier()
  private let delivery: ObservationDelivery

  init(
    initial: Value, delivery: ObservationDelivery, connect: (@escaping @Sendable (Value) -> Void) -> Subscription
  ) {
    storage = Mutex(Storage(value: initial))
    self.delivery = delivery
    let subscription = connect { [weak self] value in self?.update(value) }
    upstream.withLock { $0 = subscription }
  }

  private func update(_ value: Value) {
    let change = storage.withLock { storage -> (Value, [@Sendable (Value, Value) -> Void])? in
      guard storage.value != value else { return nil }
      let old = storage.value
      storage.value = value
      return (old, storage.observers.sorted { $0.key < $1.key }.map(\.value))
    }
    guard let (old, observers) = change else { return }
    notifier.schedule(delivery) { [notifier] in notifier.announce() }
    for observer in observers { observer(value, old) }
  }

  /// The current value.
  public var value: Value {
    notifier.access()
    return storage.withLock { $0.value }
  }

  /// Calls `observer` with the new and old value whenever the value changes.
  ///
  /// ```swift
  /// let total = store.derive { state in state.balances.values.reduce(0, +) }
  /// let subscription = total.subscribe { new, old in
  ///   print("total \(old) → \(new)")
  /// }
  /// // …
  /// subscription.cancel()
  /// ```
  ///
  /// - Parameter observer: `(new, old) -> Void`, the value after the change first, then the one
  ///   before it (never equal). It is `@Sendable` and runs synchronously on the thread that
  ///   committed the change, once per change, in commit order; it is not called for the
  ///   current value (read ``value`` for that, or iterate ``values``). Keep it short: the
  ///   committing `send` waits for it. It may send actions to the store: they are queued.
  /// - Returns: the subscription; the observer is called until it is cancelled or released.
  public func subscribe(_ observer: @escaping @Sendable (_ new: Value, _ old: Value) -> Void) -> Subscription {
    let id = storage.withLock { storage in
      defer { storage.nextID += 1 }
      storage.observers[storage.nextID] = observer
      return storage.nextID
    }
    return Subscription { [weak self] in self?.storage.withLock { _ = $0.observers.removeValue(forKey: id) } }
  }

  /// The current value, then each change once.
  public var values: AsyncStream<Value> {
    AsyncStream { continuation in
      continuation.yield(value)
      let subscription = subscribe { new, _ in continuation.yield(new) }
      continuation.onTermination = { _ in subscription.cancel() }
    }
  }
}

// MARK: - Observation

extension DerivedValue: Observable {}
