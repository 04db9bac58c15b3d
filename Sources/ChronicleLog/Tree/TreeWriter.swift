import Foundation
import LMDB

/// The writer's view of the tree: its database and the frontier of the leaves stored so far.
struct TreeWriter: Sendable {
  var db: Database
  var frontier: MerkleFrontier

  /// The append path's hook: in the entries' write transaction, adds the `leaves` of the entries
  /// `first…` (``EntryHashes/compute(_:ends:first:previous:leaves:)`` hashed them) and the
  /// subtrees they complete. A tree that does not end right before `first` is no longer maintained.
  static func extend(
    _ tree: inout TreeWriter?, txn: Transaction, first: UInt64, leaves: [MerkleDigest]
  ) throws {
    guard let db = tree?.db else { return }
    guard tree?.frontier.size == first - 1 else {
      tree = nil
      return
    }
    // In place: the frontier's storage is copied only if the caller still shares it.
    try TreeStorage.append(txn, db, frontier: &tree!.frontier, leaves: leaves)
  }
}
