import Foundation
import LMDB

/// The stored Merkle tree of a log: the `tree` database (key `u8 level ‖ u64be index`, value the
/// 32-byte hash of the complete subtree over leaves `[index · 2^level, (index + 1) · 2^level)`),
/// the `checkpoints` database (key u64be tree size, value a signed note) and the `log-id` meta
/// record. `docs/log-format.md` ("The Merkle tree") is the specification.
enum TreeStorage {
  static let treeName = "tree"
  static let checkpointsName = "checkpoints"
  /// The meta key of the random 16-byte log identifier.
  static let logIDKey = "log-id"
  /// Entries hashed per write transaction when the tree of an existing log is built.
  static let buildChunk: UInt64 = 65_536

  static func key(level: Int, index: UInt64) -> [UInt8] {
    withKey(level: level, index: index) { Array($0) }
  }

  /// The 9-byte key `u8 level ‖ u64be index`, from the stack: the append path makes one per subtree.
  static func withKey<R>(level: Int, index: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    var key: (UInt8, UInt64) = (0, 0)
    return try withUnsafeMutableBytes(of: &key) { bytes in
      bytes[0] = UInt8(level)
      withUnsafeBytes(of: index.bigEndian) { UnsafeMutableRawBufferPointer(rebasing: bytes[1..<9]).copyMemory(from: $0) }
      return try body(UnsafeRawBufferPointer(rebasing: bytes[0..<9]))
    }
  }

  /// Stores one completed subtree.
  static func put(_ completed: MerkleFrontier.Completed, _ txn: Transaction, _ db: Database) throws {
    try withKey(level: completed.level, index: completed.index) { key in
      try completed.hash.withUnsafeBytes { try txn.put($0, forKey: key, in: db) }
    }
  }

  /// The number of leaves the stored tree covers: the furthest end of a stored subtree (after a
  /// compaction only the anchor's frontier is left of the anchor, so level 0 alone does not tell).
  static func size(_ txn: Transaction, _ db: Database) throws -> UInt64 {
    try txn.withCursor(on: db) { cursor in
      var size: UInt64 = 0
      for level in 0..<64 {
        let next = key(level: level + 1, index: 0)
        let found = level == 63 ? nil : try next.withUnsafeBytes { try cursor.seek(atLeast: $0) }
        let last = found == nil ? try cursor.last() : try cursor.previous()
        guard let (key, _) = last, key.count == 9, key[0] == UInt8(level) else { continue }
        let index = key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        size = max(size, (index + 1) << UInt64(level))
      }
      return size
    }
  }

  /// Compaction's hook: removes the stored subtrees left of `anchor` that no root or proof of a
  /// tree of `anchor` or more entries needs, keeping the anchor's frontier (one subtree per set bit).
  static func prune(_ txn: Transaction, through anchor: UInt64) throws {
    guard anchor > 0, let db = try? txn.openDatabase(named: treeName) else { return }
    try txn.withCursor(on: db) { cursor in
      for level in 0..<64 where anchor >> UInt64(level) > 0 {
        let limit = (anchor >> UInt64(level)) - 1
        let keep: UInt64? = anchor >> UInt64(level) & 1 == 1 ? limit : nil
        var item = try key(level: level, index: 0).withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let (key, _) = item, key.count == 9, key[0] == UInt8(level) {
          let index = key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
          guard index <= limit else { break }
          if index == keep {
            item = try cursor.next()
          } else {
            try cursor.deleteCurrent()
            item = try self.key(level: level, index: index + 1).withUnsafeBytes { try cursor.seek(atLeast: $0) }
          }
        }
      }
    }
  }

  /// The stored hash of a complete subtree, or an error naming the one that is missing.
  static func subtree(_ txn: Transaction, _ db: Database, path: String) -> (Int, UInt64) throws -> [UInt8] {
    { level, index in
      guard let hash = try txn.get(forKey: key(level: level, index: index), in: db), hash.count == MerkleHash.size
      else {
        let first = index << level + 1
        throw TreeError.noTree(
          path: path,
          reason: "the hash of entries \(first)…\(first + (1 << level) - 1) (level \(level), index \(index)) is missing")
      }
      return hash
    }
  }

  /// Writes the leaves of the stored `values` (entries `first…`), and every subtree they complete.
  static func append(
    _ txn: Transaction, _ db: Database, frontier: inout MerkleFrontier, first: UInt64,
    values: UnsafeRawBufferPointer, ends: [Int]
  ) throws {
    var start = 0
    for (offset, end) in ends.enumerated() {
      let leaf = MerkleHash.leaf(seq: first + UInt64(offset), value: UnsafeRawBufferPointer(rebasing: values[start..<end]))
      for completed in frontier.append(leaf: leaf) {
        try put(completed, txn, db)
      }
      start = end
    }
  }
}

extension ActionLog {
  /// Opens (creating if needed) the tree and checkpoint databases and the log id, and brings the
  /// tree up to `head`, in one write transaction per ``TreeStorage/buildChunk`` entries.
  ///
  /// Kill-safe: each transaction stores leaves together with every subtree they complete, and the
  /// tree's size is read back from its last leaf, so an interrupted build continues where its last
  /// committed chunk ended. Returns `nil` (the log is left without a maintained tree) when the tree
  /// cannot follow the entries: entries it never covered were compacted away, or it covers more
  /// entries than the log holds (``verify(progress:)`` reports that).
  static func openTree(
    _ env: Environment, entries: Database, meta: Database, anchor: ChainAnchor, head: ChainAnchor
  ) throws(LogError) -> TreeWriter? {
    try storage {
      let db = try env.write { txn in
        let db = try txn.openDatabase(named: TreeStorage.treeName, create: true)
        _ = try txn.openDatabase(named: TreeStorage.checkpointsName, create: true)
        if try txn.get(forKey: Array(TreeStorage.logIDKey.utf8), in: meta) == nil {
          var id = [UInt8](repeating: 0, count: 16)
          var generator = SystemRandomNumberGenerator()
          for index in id.indices { id[index] = generator.next() }
          try txn.put(id, forKey: Array(TreeStorage.logIDKey.utf8), in: meta)
        }
        return db
      }
      while true {
        let done: TreeWriter?? = try env.write { txn in
          let size = try TreeStorage.size(txn, db)
          guard size <= head.seq, size >= anchor.seq else { return .some(nil) }
          // A stored subtree missing under the size is damage: the tree stops; verify() names the hash.
          guard var frontier = try? MerkleFrontier(size: size, subtree: TreeStorage.subtree(txn, db, path: env.path))
          else { return .some(nil) }
          guard size < head.seq else { return TreeWriter(db: db, frontier: frontier) }
          let last = min(head.seq, size + TreeStorage.buildChunk)
          let complete = try txn.withCursor(on: entries) { cursor -> Bool in
            var item = try withSequenceKey(size + 1) { try cursor.seek(atLeast: $0) }
            var seq = size + 1
            while seq <= last {
              // A gap stops the build where it is: verify() reports the missing entry.
              guard let (key, value) = item, (try? sequence(fromKey: key)) == seq else { return false }
              for completed in frontier.append(leaf: MerkleHash.leaf(seq: seq, value: value)) {
                try TreeStorage.put(completed, txn, db)
              }
              seq += 1
              item = try cursor.next()
            }
            return true
          }
          return complete ? .none : .some(nil)
        }
        if let done { return done }
      }
    }
  }
}
