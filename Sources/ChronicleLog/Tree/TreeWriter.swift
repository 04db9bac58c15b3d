import Foundation
import ChronicleLMDB

/// The writer's view of the tree: its database and the frontier of the leaves stored so far.
struct TreeWriter: Sendable {
  var db: Database
  var frontier: MerkleFrontier

  /// The append path's hook: in the entries' write transaction, adds the `leaves`
  /// of the entries `first…` (``EntryHashes/compute(_:ends:first:previous:leaves:)`` hashed them)
  /// and stores the subtrees they complete. A tree that does not end right before `first` is no
  /// longer maintained.
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
}
