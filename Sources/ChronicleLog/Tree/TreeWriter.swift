import Foundation
import LMDB

/// The writer's view of the tree: its database and the frontier of the leaves stored so far.
struct TreeWriter: Sendable {
  var db: Database
  var frontier: MerkleFrontier

  /// Batches of at least this many entries hash their tree on a thread of their own while their
  /// entries are written: about 60 µs of hashing here, well above the cost of starting a thread.
  static let backgroundThreshold = 256

  /// A batch's part of the tree: the frontier after its leaves, and the subtrees they complete at
  /// ``TreeStorage/storedLevel`` or above, which the batch's transaction stores.
  struct Batch: Sendable {
    var frontier: MerkleFrontier
    var stored: [Subtree]
  }

  /// One complete subtree to store.
  struct Subtree: Sendable {
    var level: Int
    var index: UInt64
    var hash: MerkleDigest
  }

  /// Hashes the leaves of the stored `values` (the entries after `frontier`, one after another,
  /// ending at `ends`) into `frontier`. Reads nothing from the log.
  static func hash(_ frontier: MerkleFrontier, values: UnsafeRawBufferPointer, ends: [Int]) -> Batch {
    var frontier = frontier
    var stored: [Subtree] = []
    var start = 0
    for end in ends {
      let leaf = MerkleHash.leafDigest(seq: frontier.size + 1, value: UnsafeRawBufferPointer(rebasing: values[start..<end]))
      frontier.append(leaf: leaf, reportingFrom: TreeStorage.storedLevel) { level, index, hash in
        stored.append(Subtree(level: level, index: index, hash: hash))
      }
      start = end
    }
    return Batch(frontier: frontier, stored: stored)
  }

  /// Starts hashing the tree of a batch of at least ``backgroundThreshold`` entries `first…` on a
  /// thread of its own, so that it overlaps with writing the entries; `nil` for a shorter batch or
  /// a tree that is not maintained or does not end right before `first`.
  static func startHashing(_ tree: TreeWriter?, first: UInt64, values: [UInt8], ends: [Int]) -> BackgroundValue<Batch>? {
    guard let frontier = tree?.frontier, frontier.size == first - 1, ends.count >= backgroundThreshold else { return nil }
    return BackgroundValue { values.withUnsafeBytes { hash(frontier, values: $0, ends: ends) } }
  }

  /// The append path's hook: in the entries' write transaction, adds the leaves of the entries
  /// `first…` (their stored values one after another in `values`, ending at `ends`) and stores the
  /// subtrees they complete, with the hashes `hashed` computed in the background when given. A tree
  /// that does not end right before `first` is no longer maintained.
  static func extend(
    _ tree: inout TreeWriter?, txn: Transaction, first: UInt64, values: UnsafeRawBufferPointer, ends: [Int],
    hashed: BackgroundValue<Batch>?
  ) throws {
    guard let writer = tree else { return }
    guard writer.frontier.size == first - 1 else {
      tree = nil
      return
    }
    let batch = hashed?.value ?? hash(writer.frontier, values: values, ends: ends)
    for subtree in batch.stored {
      try TreeStorage.put(level: subtree.level, index: subtree.index, hash: subtree.hash, txn, writer.db)
    }
    tree?.frontier = batch.frontier
  }
}

/// A value computed on a thread of its own while the caller goes on; ``value`` waits for it.
///
/// A new thread rather than a shared queue: the caller blocks in ``value``, and a caller that is
/// itself running on a shared queue's last free thread would otherwise wait for work queued behind
/// itself.
final class BackgroundValue<Value: Sendable>: @unchecked Sendable {
  // Sound: `result` is written once, by the worker thread, before it signals `done`; it is read
  // only after a `wait()` on `done` returned, which orders that write before every read, and the
  // semaphore is signalled again after each wait so that later reads (a retried transaction) find
  // it ready.
  private var result: Value?
  private let done = DispatchSemaphore(value: 0)

  init(_ work: @escaping @Sendable () -> Value) {
    Thread { [self] in
      result = work()
      done.signal()
    }.start()
  }

  /// The value, once the thread has computed it.
  var value: Value {
    done.wait()
    defer { done.signal() }
    return result!
  }
}
