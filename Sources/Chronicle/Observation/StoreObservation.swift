import Synchronization
import Observation

/// What the store needs to be `Observable`: its notifier, and the scoped stores
/// that check their part when it changes.
struct StoreObservation: Sendable {
  let notifier = ObservationNotifier()
  let children = ObservationChildren()
}
