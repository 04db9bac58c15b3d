import Foundation
import Observation
import Synchronization

/// Delivers a shared store's changes and refusals on the main actor, in the order they happened:
/// posts queue up under a lock, and one main-actor task at a time drains the queue.
final class SharedDelivery<State: Sendable, Action: Sendable>: Sendable {
  private struct Queue {
    var changes: [(new: State, old: State)] = []
    var rejections: [Rejection<Action>] = []
    var isScheduled = false
    var nextID = 0
    var subscribers: [(id: Int, observer: @MainActor @Sendable (State, State) -> Void)] = []
    var rejectionHandlers: [(id: Int, handler: @MainActor @Sendable (Rejection<Action>) -> Void)] = []
  }
  private let queue = Mutex(Queue())
  /// The Observation framework's registrar for the store's state (SwiftUI).
  let notifier = ObservationNotifier()

  func post(old: State, new: State, rejections: [Rejection<Action>] = []) {
    let notifier = notifier
    let schedule = queue.withLock { queue in
      // Nothing listens: nothing to queue, and no task to start.
      if queue.subscribers.isEmpty, queue.rejectionHandlers.isEmpty, !notifier.wasAccessed { return false }
      queue.changes.append((new, old))
      queue.rejections.append(contentsOf: rejections)
      defer { queue.isScheduled = true }
      return !queue.isScheduled
    }
    if schedule { Task { @MainActor in self.drain() } }
  }

  @MainActor private func drain() {
    let (changes, rejections, subscribers, handlers) = queue.withLock { queue in
      defer {
        queue.changes = []
        queue.rejections = []
        queue.isScheduled = false
      }
      return (queue.changes, queue.rejections, queue.subscribers, queue.rejectionHandlers)
    }
    notifier.announce()
    for change in changes {
      for subscriber in subscribers { subscriber.observer(change.new, change.old) }
    }
    for rejection in rejections {
      for handler in handlers { handler.handler(rejection) }
    }
  }

  func subscribe(_ observer: @escaping @MainActor @Sendable (State, State) -> Void) -> Subscription {
    let id = queue.withLock { queue in
      defer { queue.nextID += 1 }
      queue.subscribers.append((queue.nextID, observer))
      return queue.nextID
    }
    return Subscription { [weak self] in self?.queue.withLock { $0.subscribers.removeAll { $0.id == id } } }
  }

  func onRejection(_ handler: @escaping @MainActor @Sendable (Rejection<Action>) -> Void) -> Subscription {
    let id = queue.withLock { queue in
      defer { queue.nextID += 1 }
      queue.rejectionHandlers.append((queue.nextID, handler))
      return queue.nextID
    }
    return Subscription { [weak self] in self?.queue.withLock { $0.rejectionHandlers.removeAll { $0.id == id } } }
  }
}

/// A one-bit signal between tasks: ``ring()`` wakes the task waiting in ``wait()``, or the next
/// one that waits. Waiting ends early when the waiting task is cancelled.
final class Doorbell: Sendable {
  private struct Bell {
    var rung = false
    var waiter: CheckedContinuation<Void, Never>?
  }
  private let bell = Mutex(Bell())

  func ring() {
    let waiter = bell.withLock { bell in
      defer { bell.waiter = nil }
      if bell.waiter == nil { bell.rung = true }
      return bell.waiter
    }
    waiter?.resume()
  }

  func wait() async {
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let now = bell.withLock { bell in
          if bell.rung {
            bell.rung = false
            return true
          }
          // Cancelled before this point, the handler below found no waiter to wake.
          if Task.isCancelled { return true }
          bell.waiter = continuation
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      let waiter = bell.withLock { bell in
        defer { bell.waiter = nil }
        return bell.waiter
      }
      waiter?.resume()
    }
  }
}
