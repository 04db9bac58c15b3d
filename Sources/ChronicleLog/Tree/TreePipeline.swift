import Foundation
import LMDB
import Synchronization

/// A large batch's Merkle leaves and tree growth, worked out on a second thread behind its chain.
///
/// Entry i's leaf covers its stored value, chain hash included, so it can be hashed as soon as the
/// chain reached entry i; and the leaves are independent of one another. So the calling thread
/// hashes the chain (sequential by nature) group by group, saying after each how far it got, and
/// the helper hashes the leaves of every group the chain passed, then adds them to a copy of the
/// frontier (``TreeWriter/Growth``) while the caller puts the entries. SHA-256 is bound by each
/// core's SHA unit, so the two threads split the hashing: the caller hashes the chain alone
/// instead of the chain and the leaves.
///
/// The helper thread of a plain batch is started when the batch begins
/// (``start(entries:tree:first:)``), before its entries are encoded, so that it is awake when the
/// chain starts: a thread woken only then starts late and leaves the caller waiting for the tree.
/// An encrypted batch, whose sealing has both cores, starts it once sealed and hashed, and hands it
/// the leaves (``grow(leaves:)``).
///
/// The caller must end the pipeline it started with ``end()`` (once the entries are written or
/// failed), and must keep the values it hashes valid and unchanged until then: the helper reads them.
///
/// Why the threads agree: `growth` is written only by the one thread that runs the published group
/// (a `SharedGroups` group runs once) and read by the caller after `SharedGroups.finish()`. The
/// helper reads an entry's value only once `chained` passed it, which the caller stores (releasing)
/// after writing the entry's chain hash, and the caller writes no value after hashing it.
final class TreePipeline {
  private let groups: SharedGroups
  private let growth: TreeWriter.Growth
  /// How far the chain is hashed.
  private let chained = ChainProgress()

  private init(groups: SharedGroups, growth: TreeWriter.Growth) {
    self.groups = groups
    self.growth = growth
  }

  /// A pipeline with its helper thread started, for a batch of `entries` entries from `first` on,
  /// added to `tree`; `nil` when the log keeps no tree or the batch is hashed on the calling thread
  /// alone (a small batch, or a machine with one core).
  static func start(entries: Int, tree: TreeWriter?, first: UInt64) -> TreePipeline? {
    guard tree != nil, let groups = SharedGroups.start(items: entries) else { return nil }
    return TreePipeline(groups: groups, growth: TreeWriter.Growth(of: tree, first: first))
  }

  /// Writes the chain hashes of the batch in `values` (laid out as
  /// ``EntryHashes/compute(_:ends:first:previous:leaves:)`` has it) on this thread, while the helper
  /// hashes the leaves behind it and works out the tree's growth. `previous` is the chain hash of
  /// the entry before the batch.
  func hash(_ values: UnsafeMutableRawBufferPointer, ends: [Int], first: UInt64, previous: UnsafeRawBufferPointer) {
    let count = ends.count
    groups.publish(groups: 1) { [growth, chained] _ in
      var leaves = [MerkleDigest](repeating: MerkleDigest(), count: count)
      leaves.withUnsafeMutableBytes { out in
        ends.withUnsafeBufferPointer { ends in
          var hashed = 0
          while hashed < count {
            let ready = chained.wait(beyond: hashed)
            EntryHashes.leaves(
              UnsafeRawBufferPointer(values), ends: ends, entries: hashed..<ready, first: first,
              into: out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            hashed = ready
          }
        }
      }
      growth.compute(leaves: leaves)
    }
    let base = values.baseAddress!.assumingMemoryBound(to: UInt8.self)
    ends.withUnsafeBufferPointer { ends in
      var hashed = 0
      while hashed < count {
        let end = min(hashed + SharedGroups.groupSize, count)
        let before =
          hashed == 0
          ? previous.baseAddress!.assumingMemoryBound(to: UInt8.self)
          : UnsafePointer(base + ends[hashed - 1] - EntryFormat.hashSize)
        EntryHashes.compute(values, ends: ends, entries: hashed..<end, first: first, previous: before, leaves: nil)
        chained.advance(to: end)
        hashed = end
      }
    }
  }

  /// Works out the tree's growth by `leaves`, the batch's leaves hashed already (an encrypted
  /// batch's, with its sealing), on the helper.
  func grow(leaves: [MerkleDigest]) {
    groups.publish(groups: 1) { [growth] _ in growth.compute(leaves: leaves) }
  }

  /// In the entries' write transaction, after ``hash(_:ends:first:previous:)`` or ``grow(leaves:)``: waits for the
  /// helper's growth (or works it out here if the helper never started), stores its subtrees and
  /// moves `tree` to the new frontier, as ``TreeWriter/Growth/store(into:txn:)`` does.
  func store(into tree: inout TreeWriter?, txn: Transaction) throws {
    groups.finish()
    try growth.store(into: &tree, txn: txn)
  }

  /// Ends the pipeline: lets the helper go if the batch failed before it was hashed, else waits
  /// until the helper is done with the batch's values.
  func end() {
    groups.abandon()
    groups.finish()
  }
}

/// How many of a batch's entries have their chain hash written: the calling thread raises it as it
/// hashes the chain, a helper that hashes their leaves (which cover the chain hashes) waits for it.
/// A class, so that the helper's work can hold it.
final class ChainProgress: Sendable {
  private let count = Atomic<Int>(0)

  /// The chain hashes of the first `entries` entries are written (releasing them to the helper).
  func advance(to entries: Int) { count.store(entries, ordering: .releasing) }

  /// The batch failed before its chain was hashed: what ``wait(beyond:)`` returns from then on.
  static let abandoned = Int.max

  /// The batch failed: helpers waiting for the chain stop waiting.
  func abandon() { count.store(Self.abandoned, ordering: .releasing) }

  /// Waits until more than `entries` entries are chained, and returns how many are
  /// (``abandoned`` once the batch failed).
  func wait(beyond entries: Int) -> Int {
    while true {
      let chained = count.load(ordering: .acquiring)
      if chained > entries { return chained }
      sched_yield()
    }
  }
}
