import ChronicleLMDB
import Synchronization

/// The writer's count of commits and bytes since its last reader check, and what checks cleared.
final class ReaderWatch: Sendable {
  private struct Counters {
    var commits = 0
    var bytes = 0
    var lastCheck = ContinuousClock.now
    var cleared = 0
    var handler: (@Sendable (Int) -> Void)?
  }

  private let counters = Mutex(Counters())

  init() {}

  var cleared: Int { counters.withLock { $0.cleared } }

  var handler: (@Sendable (Int) -> Void)? {
    get { counters.withLock { $0.handler } }
    set { counters.withLock { $0.handler = newValue } }
  }

  /// Adds what a check cleared and calls the handler if it cleared any.
  func record(cleared: Int) {
    guard cleared > 0 else { return }
    let handler = counters.withLock { counters in
      counters.cleared += cleared
      return counters.handler
    }
    handler?(cleared)
  }

  /// Counts a commit of `bytes` and, when one is due, checks the reader table of `environment`.
  /// A failed check is retried at the next commit (it changes nothing on disk).
  func afterCommit(bytes: Int, environment: Environment) {
    let now = ContinuousClock.now
    let due = counters.withLock { counters -> Bool in
      counters.commits += 1
      counters.bytes += bytes
      guard
        counters.commits >= ReaderCheckPolicy.commits || counters.bytes >= ReaderCheckPolicy.bytes
          || now - counters.lastCheck >= ReaderCheckPolicy.interval
      else { return false }
      counters.commits = 0
      counters.bytes = 0
      counters.lastCheck = now
      return true
    }
    guard due, let cleared = try? environment.readerCheck() else { return }
    record(cleared: cleared)
  }
}
