import Dispatch
import Foundation
import Observation
import Synchronization

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
  /// Whether anything ever read the subject: until then no observer can be registered, and
  /// there is nothing to announce.
  private let accessed = Atomic(false)

  /// The property observers are registered under.
  private var version: Int { 0 }

  /// Records that the running observation tracking (if any) read the subject.
  func access() {
    // Set before the reader reads the store's state under its lock: a commit that publishes after
    // that read sees the flag, through the same lock.
    if !accessed.load(ordering: .relaxed) { accessed.store(true, ordering: .sequentiallyConsistent) }
    registrar.access(self, keyPath: \.version)
  }

  /// Whether ``access()`` was ever called: whether an observer may be registered.
  var wasAccessed: Bool { accessed.load(ordering: .sequentiallyConsistent) }

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
