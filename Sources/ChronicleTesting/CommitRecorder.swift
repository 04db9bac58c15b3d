import Chronicle
import Synchronization

/// What a ``TestStore`` saw of its store: every commit, in log order, from
/// whichever thread delivered it.
final class CommitRecorder<State: Sendable, Action: Sendable>: Sendable {
  struct Storage {
    /// The last sequence number delivered (or the last one before the test store opened).
    var lastSeq: UInt64 = 0
    /// Every commit since the test store opened, by sequence number.
    var commits: [UInt64: Commit<State, Action>] = [:]
    /// Commits of actions sent back by effects or middleware that were not received yet, oldest first.
    var pending: [Commit<State, Action>] = []
    /// Errors thrown by effects (or effect actions refused), not reported yet.
    var effectErrors: [String] = []
  }

  private let storage = Mutex(Storage())

  /// Entries up to `seq` were committed before recording started.
  func start(after seq: UInt64) { storage.withLock { $0.lastSeq = seq } }

  /// Called by the store for every commit.
  func record(_ commit: Commit<State, Action>) {
    storage.withLock { storage in
      storage.lastSeq = max(storage.lastSeq, commit.seq)
      storage.commits[commit.seq] = commit
      if commit.isFromEffect, commit.action != nil { storage.pending.append(commit) }
    }
  }

  /// Called by the store when an effect fails.
  func recordEffectError(_ error: any Error) {
    storage.withLock { $0.effectErrors.append("\(error)") }
  }

  // MARK: - Reading

  /// The last sequence number delivered to the recorder.
  var lastSeq: UInt64 { storage.withLock(\.lastSeq) }

  /// The commit of entry `seq`, if it was delivered.
  func commit(_ seq: UInt64) -> Commit<State, Action>? { storage.withLock { $0.commits[seq] } }

  /// Every commit delivered so far, by sequence number.
  var commits: [UInt64: Commit<State, Action>] { storage.withLock(\.commits) }

  /// The actions not received yet, oldest first.
  var pendingActions: [Action] { storage.withLock { $0.pending.compactMap(\.action) } }

  // MARK: - Taking

  /// Removes and returns every unreceived commit.
  func takePending() -> [Commit<State, Action>] {
    storage.withLock { storage in
      defer { storage.pending.removeAll() }
      return storage.pending
    }
  }

  /// Removes and returns the oldest unreceived commit.
  func takeFirstPending() -> Commit<State, Action>? {
    storage.withLock { $0.pending.isEmpty ? nil : $0.pending.removeFirst() }
  }

  /// Removes and returns the oldest unreceived commit whose action `matches`,
  /// together with the older ones it skips (they are removed too).
  func takeFirstPending(where matches: (Action) -> Bool) -> (
    match: Commit<State, Action>, skipped: [Commit<State, Action>]
  )? {
    storage.withLock { storage in
      guard let index = storage.pending.firstIndex(where: { $0.action.map(matches) ?? false }) else { return nil }
      let skipped = Array(storage.pending[..<index])
      let match = storage.pending[index]
      storage.pending.removeSubrange(...index)
      return (match, skipped)
    }
  }

  /// Removes and returns the errors of effects not reported yet.
  func takeEffectErrors() -> [String] {
    storage.withLock { storage in
      defer { storage.effectErrors.removeAll() }
      return storage.effectErrors
    }
  }
}
