import Dispatch
import Foundation
import Observation
import Synchronization

// MARK: - Public option

/// Where a store delivers the Observation framework's change notifications:
/// what SwiftUI views, and `withObservationTracking`, react to.
///
/// Commits happen on whatever thread sends: a button on the main thread, an
/// effect on a background thread. SwiftUI expects changes on the main actor, so
/// the default is `.mainActor`. It concerns only the Observation framework:
/// `subscribe` observers are always called on the committing thread, and
/// `states` delivers to whichever task iterates it.
///
/// ```swift
/// var options = StoreOptions()
/// options.observationDelivery = .committingThread   // a server, no UI
/// ```
public enum ObservationDelivery: Sendable, Hashable {
  /// On the main actor (the default, safe for SwiftUI). A change committed on
  /// the main thread is announced before `send` returns; one committed on
  /// another thread is announced shortly after, on the main actor, and changes
  /// committed in between are announced together, once.
  case mainActor
  /// At once, on the thread that committed the change, before `send` returns.
  /// For code that observes without a main actor (tools, servers); never for SwiftUI.
  case committingThread
}

// MARK: - The main actor

/// Marks the main dispatch queue, the main actor's executor.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

/// Whether the caller runs on the main actor: on the main thread, or on the
/// main dispatch queue (on Linux, a thread that is not the main thread may drain
/// it, after `dispatchMain()` and in test runners).
func isOnMainActor() -> Bool {
  Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
}

// MARK: - Equality of parts

/// `==` for `Value` when it is `Equatable`, `nil` otherwise.
func equality<Value>(of type: Value.Type) -> (@Sendable (Value, Value) -> Bool)? {
  guard type is any Equatable.Type else { return nil }
  return { old, new in (old as? any Equatable)?.isEqual(to: new) ?? false }
}

extension Equatable {
  /// `==` with a value of any type: `false` for another type.
  fileprivate func isEqual(to other: Any) -> Bool { (other as? Self) == self }
}
