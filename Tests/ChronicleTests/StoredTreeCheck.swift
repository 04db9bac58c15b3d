import Foundation
import ChronicleLMDB

@testable import ChronicleLog

// MARK: - A log's stored Merkle tree, read raw and recomputed

/// Reads a closed log's stored subtree hashes straight from LMDB and recomputes them from its
/// entries (docs/log-format.md §9: keys `u8 level ‖ u64be index`, leaves of entries 1…).
enum StoredTreeCheck {
  /// A complete subtree: its level (2^level leaves) and its index among those of its level.
  struct Key: Hashable, CustomStringConvertible {
    var level: Int
    var index: UInt64
    /// The number of leaves up to the subtree's end.
    var end: UInt64 { (index + 1) << UInt64(level) }
    var description: String { "level \(level) index \(index)" }
  }

  /// Opens `url` read-only with plain LMDB and runs `body` in one read transaction.
  private static func read<R>(_ url: URL, _ body: (Transaction) throws -> R) throws -> R {
    let env = try Environment(path: url.path, configuration: .init(maxDatabases: 8, flags: .readOnly))
    defer { env.close() }
    return try env.read(body)
  }

  /// Every stored subtree hash of the log in `url`.
  static func stored(_ url: URL) throws -> [Key: [UInt8]] {
    try read(url) { txn in
      let tree = try txn.openDatabase(named: TreeStorage.treeName)
      return try txn.withCursor(on: tree) { cursor in
        var hashes: [Key: [UInt8]] = [:]
        var item = try cursor.first()
        while let (key, value) = item {
          let index = key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
          hashes[Key(level: Int(key[key.startIndex]), index: index)] = Array(value)
          item = try cursor.next()
        }
        return hashes
      }
    }
  }

  /// The newest entry of the log in `url` and every complete subtree of the stored level and above
  /// over its entries 1…head, hashed from the entries' stored values. The entries must be gapless from 1.
  static func recomputed(_ url: URL) throws -> (head: UInt64, subtrees: [Key: [UInt8]]) {
    try read(url) { txn in
      let entries = try txn.openDatabase(named: "entries")
      return try txn.withCursor(on: entries) { cursor in
        var frontier = MerkleFrontier()
        var subtrees: [Key: [UInt8]] = [:]
        var seq: UInt64 = 0
        var item = try cursor.first()
        while let (key, value) = item {
          seq += 1
          let stored = key.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
          guard stored == seq else { throw TreeError.outOfRange("entry \(seq) is missing (next: \(stored))") }
          for completed in frontier.append(leaf: MerkleHash.leaf(seq: seq, value: Array(value)))
          where completed.level >= TreeStorage.storedLevel {
            subtrees[Key(level: completed.level, index: completed.index)] = completed.hash
          }
          item = try cursor.next()
        }
        return (seq, subtrees)
      }
    }
  }
}
