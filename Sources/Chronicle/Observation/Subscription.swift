import Synchronization
import Observation

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
