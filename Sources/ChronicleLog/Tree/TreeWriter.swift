import Dispatch
import Foundation
import LMDB
import Synchronization

/// The writer's view of the tree: its database and the frontier of the leaves stored so far.
struct TreeWriter: Sendable {
  var db: Database
  var frontier: MerkleFrontier
}

// MARK: - A batch's subtrees, hashed beside the entries' puts

/// The tree's part of one appended batch: the frontier after its leaves and the subtrees of
/// ``TreeStorage/storedLevel`` and above they complete, hashed before the write transaction needs
/// them, on another thread for large batches while the caller stores the entries.
///
/// The hashing only reads the leaves and a copy of the frontier, so it can run anywhere; the
/// transaction (``finish(_:txn:)``) then stores the subtrees in order. Whichever thread claims the
/// work first does it: when no worker has started it by the time the transaction needs it, the
/// caller hashes it itself, so a busy or exhausted thread pool delays nothing and never deadlocks.
struct TreeExtension: Sendable {
  /// Batches of at least this many leaves are hashed on a worker thread: below it, the hand-over
  /// costs about as much as the hashing it moves.
  static let backgroundThreshold = 256

  /// One completed subtree: its level, index and hash.
  struct Subtree: Sendable {
    var level: Int
    var index: UInt64
    var hash: MerkleDigest
  }

  /// What the transaction stores and keeps.
  struct Hashed: Sendable {
    var frontier: MerkleFrontier
    var subtrees: [Subtree]
  }

  private enum Work: Sendable {
    /// The log keeps no tree.
    case none
    /// The tree does not end right before the batch: it is no longer maintained.
    case drop
    case work(Job)
  }

  /// The hashing of one batch, done once by whichever thread claims it first.
  private final class Job: Sendable {
    private let frontier: MerkleFrontier
    private let leaves: [MerkleDigest]
    private enum Phase: Sendable {
      case open
      case claimed
      case ready(Hashed)
    }

    private let state = Mutex<Phase>(.open)
    /// Signalled once by the claimer when its result is stored.
    private let done = DispatchSemaphore(value: 0)

    init(frontier: MerkleFrontier, leaves: [MerkleDigest]) {
      self.frontier = frontier
      self.leaves = leaves
    }

    /// Hashes the batch unless another thread already claimed it.
    func run() {
      let claimed = state.withLock { phase -> Bool in
        guard case .open = phase else { return false }
        phase = .claimed
        return true
      }
      guard claimed else { return }
      let hashed = hash()
      state.withLock { $0 = .ready(hashed) }
      done.signal()
    }

    /// The result: hashed here if no thread has claimed the work, else waited for (once).
    func result() -> Hashed {
      run()
      while true {
        let ready = state.withLock { phase -> Hashed? in
          if case .ready(let hashed) = phase { return hashed }
          return nil
        }
        if let ready { return ready }
        done.wait()
        done.signal()  // later callers (a retried transaction) find it without waiting
      }
    }

    private func hash() -> Hashed {
      var frontier = frontier
      var subtrees: [Subtree] = []
      subtrees.reserveCapacity(leaves.count >> (TreeStorage.storedLevel - 1) + 64)
      frontier.append(leaves: leaves, reportingFrom: TreeStorage.storedLevel) { level, index, hash in
        subtrees.append(Subtree(level: level, index: index, hash: hash))
      }
      return Hashed(frontier: frontier, subtrees: subtrees)
    }
  }

  private let work: Work

  /// Starts hashing the `leaves` of entries `first…` onto `tree`: on a worker thread when
  /// `background` is set and the batch has ``backgroundThreshold`` leaves or more.
  init(_ tree: TreeWriter?, first: UInt64, leaves: [MerkleDigest], background: Bool = true) {
    guard let tree else {
      work = .none
      return
    }
    guard tree.frontier.size == first - 1 else {
      work = .drop
      return
    }
    let job = Job(frontier: tree.frontier, leaves: leaves)
    work = .work(job)
    if background && leaves.count >= Self.backgroundThreshold {
      DispatchQueue.global(qos: .userInitiated).async { job.run() }
    }
  }

  /// In the entries' write transaction: stores the completed subtrees in `tree`'s database and
  /// sets its frontier (or drops a tree that does not end right before the batch). Runs again
  /// unchanged when the transaction is retried.
  func finish(_ tree: inout TreeWriter?, txn: Transaction) throws {
    switch work {
    case .none:
      return
    case .drop:
      tree = nil
    case .work(let job):
      guard let db = tree?.db else { return }
      let hashed = job.result()
      for subtree in hashed.subtrees {
        try TreeStorage.put(level: subtree.level, index: subtree.index, hash: subtree.hash, txn, db)
      }
      tree?.frontier = hashed.frontier
    }
  }
}
