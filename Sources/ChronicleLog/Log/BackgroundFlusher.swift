import Foundation
import ChronicleLMDB
import Synchronization

/// Syncs an environment periodically (for `.normal` durability): a timer on a serial queue of its
/// own, which runs nothing between ticks (no thread waits for them).
final class BackgroundFlusher: @unchecked Sendable {
  // Sound: the only stored property is a DispatchSourceTimer, whose methods
  // (cancel) are documented thread-safe; the handler captures a Sendable environment.
  private let timer: DispatchSourceTimer

  init(interval: Duration, environment: Environment) {
    let nanos = Int(interval.components.seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000)
    timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "Chronicle.ActionLog.flush", qos: .utility))
    timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(max(nanos, 1_000_000)))
    // A failed background sync is retried at the next tick; `close()` and `sync()` report failures.
    timer.setEventHandler { try? environment.sync(force: true) }
    timer.resume()
  }

  func cancel() { timer.cancel() }
}
