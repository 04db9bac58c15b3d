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

// MARK: - Notifier

/// The registrar a store, scoped store or derived value announces its changes
/// through, and their delivery where ``ObservationDelivery`` says.
///
/// The notifier is itself the subject its registrar names: observers are
/// registered by registrar and key path, so a delivery queued for the main actor
/// holds the notifier, never the store (a released store closes its log at once).
final class ObservationNotifier: Observable, Sendable {
  private let registrar = ObservationRegistrar()
  /// Whether a delivery on the main actor is queued and has not started yet.
  private let isScheduled = Mutex(false)

  /// The property observers are registered under.
  private var version: Int { 0 }

  /// Records that the running observation tracking (if any) read the subject.
  func access() { registrar.access(self, keyPath: \.version) }

  /// Tells observers that the subject changed, now.
  func announce() {
    registrar.willSet(self, keyPath: \.version)
    registrar.didSet(self, keyPath: \.version)
  }

  /// Runs `deliver` where `delivery` says: now on the committing thread, now on
  /// the main actor, or once soon on the main actor for every request made
  /// until it starts. `deliver` must read the latest state itself.
  func schedule(_ delivery: ObservationDelivery, _ deliver: @escaping @Sendable () -> Void) {
    if delivery == .committingThread || isOnMainActor() {
      deliver()
      return
    }
    let alreadyScheduled = isScheduled.withLock { scheduled in
      defer { scheduled = true }
      return scheduled
    }
    guard !alreadyScheduled else { return }
    Task { @MainActor in
      // Cleared before reading: a change committed from here on schedules again.
      isScheduled.withLock { $0 = false }
      deliver()
    }
  }
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

// MARK: - Children of a store

/// Something that derives what it shows from a root store's state and checks,
/// when the root announces a change, whether its own part changed.
protocol ObservationChild: AnyObject, Sendable {
  /// Called where the root delivers its notifications, after the root's own announcement.
  func rootChanged()
}

/// The root store's observable children (scoped stores at any depth), held weakly.
final class ObservationChildren: Sendable {
  private struct Entry {
    weak var child: (any ObservationChild)?
  }

  private let entries = Mutex<[Entry]>([])

  /// Adds `child`; it is dropped once released.
  func add(_ child: any ObservationChild) {
    entries.withLock { entries in
      entries.removeAll { $0.child == nil }
      entries.append(Entry(child: child))
    }
  }

  /// Lets every living child check its part.
  func rootChanged() {
    let children = entries.withLock { entries in
      entries.removeAll { $0.child == nil }
      return entries.compactMap(\.child)
    }
    for child in children { child.rootChanged() }
  }
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
