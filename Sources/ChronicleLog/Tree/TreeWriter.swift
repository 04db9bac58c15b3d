import Foundation
import ChronicleLMDB

/// The writer's view of the tree: its database and the frontier of the leaves stored so far.
struct TreeWriter: Sendable {
  var db: Database
  var frontier: MerkleFrontier

  /// The append path's hook for a small batch: in the entries' write transaction, adds the `leaves`
  /// of the entries `first…` (``EntryHashes/compute(_:ends:first:previous:leaves:)`` hashed them)
  /// and stores the subtrees they complete. A tree that does not end right before `first` is no
  /// longer maintained. (A large batch's growth is worked out beforehand: ``Growth``.)
  static func extend(_ tree: inout TreeWriter?, txn: Transaction, first: UInt64, leaves: [MerkleDigest]) throws {
    guard let db = tree?.db else { return }
    guard tree?.frontier.size == first - 1 else {
      tree = nil
      return
    }
    try tree!.frontier.append(leaves: leaves, reportingFrom: TreeStorage.storedLevel) { level, index, hash in
      try TreeStorage.put(level: level, index: index, hash: hash, txn, db)
    }
  }

  /// What a batch adds to the tree: the frontier after its leaves, and the subtrees they complete
  /// that are stored (``TreeStorage/storedLevel`` and up), for a large batch: worked out
  /// (``compute(leaves:)``) on a second thread while the write transaction puts the entries, and
  /// stored after them (``store(into:txn:)``).
  // @unchecked Sendable: `computed` is written once, by the one thread that runs `compute(leaves:)`
  // (a `SharedGroups` group runs once), and read by the writer only after that group is done.
  final class Growth: @unchecked Sendable {
    private let start: TreeWriter?
    private let first: UInt64
    private var computed: (frontier: MerkleFrontier, subtrees: [(level: Int, index: UInt64, hash: MerkleDigest)])?

    /// The growth of `tree` by the batch of entries `first…`.
    init(of tree: TreeWriter?, first: UInt64) {
      start = tree
      self.first = first
    }

    /// Adds `leaves`, the batch's leaves (``EntryHashes`` hashed them), to a copy of the frontier,
    /// collecting the subtrees to store; nothing for a tree that does not end right before the batch.
    func compute(leaves: [MerkleDigest]) {
      guard let start, start.frontier.size == first - 1 else { return }
      var frontier = start.frontier
      var subtrees: [(level: Int, index: UInt64, hash: MerkleDigest)] = []
      subtrees.reserveCapacity(leaves.count / Int(TreeStorage.storedWidth) + 8)
      frontier.append(leaves: leaves, reportingFrom: TreeStorage.storedLevel) { subtrees.append(($0, $1, $2)) }
      computed = (frontier, subtrees)
    }

    /// In the entries' write transaction, once ``compute(leaves:)`` ran: stores the subtrees and
    /// moves `tree` (the writer's tree when the growth was worked out) to the new frontier. A tree
    /// that does not end right before the batch is no longer maintained (`tree` becomes `nil`).
    func store(into tree: inout TreeWriter?, txn: Transaction) throws {
      guard let db = tree?.db else { return }
      guard let computed else {
        tree = nil
        return
      }
      for subtree in computed.subtrees {
        try TreeStorage.put(level: subtree.level, index: subtree.index, hash: subtree.hash, txn, db)
      }
      tree!.frontier = computed.frontier
    }
  }
}
