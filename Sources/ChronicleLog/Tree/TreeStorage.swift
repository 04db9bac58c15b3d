import Foundation
import ChronicleLMDB

/// The stored Merkle tree of a log: the `tree` database (key `u8 level ‖ u64be index`, value the
/// 32-byte hash of the complete subtree over leaves `[index · 2^level, (index + 1) · 2^level)`, for
/// every complete subtree of level ``storedLevel`` or more; left of a compaction's anchor, only what it
/// keeps, `TreeCompaction.swift`), the `checkpoints` database (key u64be tree size, value a signed note) and the `log-id` meta
/// record. `docs/log-format.md` ("The Merkle tree") is the specification.
enum TreeStorage {
  static let treeName = "tree"
  static let checkpointsName = "checkpoints"
  /// The meta key of the random 16-byte log identifier.
  static let logIDKey = "log-id"
  /// Entries hashed per write transaction when the tree of an existing log is built.
  static let buildChunk: UInt64 = 65_536
  /// The lowest level of the subtrees an append stores (part of the format, docs/log-format.md §9):
  /// complete subtrees of `2^storedLevel` = 16 leaves and more are stored; the lower ones are
  /// recomputed from the (at most 16) entries they cover, except left of a compaction's anchor.
  static let storedLevel = 4
  /// The leaves of one subtree at ``storedLevel``.
  static let storedWidth: UInt64 = 1 << UInt64(storedLevel)

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

  /// Stores the subtree at `level` and `index`, its key and hash from the stack.
  @inline(__always)
  static func put(level: Int, index: UInt64, hash: MerkleDigest, _ txn: Transaction, _ db: Database) throws {
    try withKey(level: level, index: index) { key in
      try hash.withUnsafeBytes { try txn.put($0, forKey: key, in: db) }
    }
  }

  /// Whether the stored subtree at `level` and `index` is `hash`: `nil` when none is stored.
  static func stored(
    level: Int, index: UInt64, equals hash: MerkleDigest, _ txn: Transaction, _ db: Database
  ) throws -> Bool? {
    try withKey(level: level, index: index) { key in try txn.withValue(forKey: key, in: db) { hash.equals($0) } }
  }

  /// The furthest end `(index + 1) · 2^level` of a stored subtree (0 when none is stored).
  static func coverage(_ txn: Transaction, _ db: Database) throws -> UInt64 {
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

  /// The size of the tree whose stored subtrees end at `covered`, over a log whose newest entry is
  /// `end`: every entry up to `end`, but no further than the next stored-level subtree that is not
  /// stored (`⌊covered / 16⌋ · 16 + 15`). A tree that covers more than `end` (its newest entries
  /// were removed) keeps its coverage.
  static func size(covered: UInt64, end: UInt64) -> UInt64 {
    guard covered <= end else { return covered }
    return min(end, covered / storedWidth * storedWidth + storedWidth - 1)
  }

  /// The tree's size in `txn` (see ``size(covered:end:)``).
  static func size(_ txn: Transaction, _ db: Database, entries: Database, anchor: UInt64) throws -> UInt64 {
    size(covered: try coverage(txn, db), end: try lastEntry(txn, entries, anchor: anchor))
  }

  /// The newest sequence number in `entries`, or the anchor's when it holds none.
  static func lastEntry(_ txn: Transaction, _ entries: Database, anchor: UInt64) throws -> UInt64 {
    try txn.withCursor(on: entries) { try $0.last().map { try sequence(fromKey: $0.key) } } ?? anchor
  }

  /// The hash of a complete subtree, as docs/log-format.md §9 says a reader finds it: one of level
  /// ``storedLevel`` or more is read from `tree`; a lower one over entries the log holds (its first
  /// leaf at or after `anchor`) is recomputed from them; a lower one that reaches left of the anchor
  /// is read from `tree` (compaction stored it) or else combined from its two halves. Throws an
  /// error naming the hash or entry that is missing.
  static func subtree(
    _ txn: Transaction, _ db: Database, entries: Database, anchor: UInt64, path: String
  ) -> (Int, UInt64) throws -> [UInt8] {
    func missing(_ level: Int, _ index: UInt64, _ why: String) -> TreeError {
      let first = index << UInt64(level) + 1
      let entries = level == 0 ? "entry \(first)" : "entries \(first)…\(first + (1 << UInt64(level)) - 1)"
      return TreeError.missingHash(path: path, reason: "the hash of \(entries) (level \(level), index \(index)) \(why)")
    }
    func fromEntries(_ level: Int, _ index: UInt64) throws -> [UInt8] {
      let first = index << UInt64(level) + 1
      let count = UInt64(1) << UInt64(level)
      return try txn.withCursor(on: entries) { cursor in
        var frontier = MerkleFrontier()
        var item = try withSequenceKey(first) { try cursor.seek(atLeast: $0) }
        for seq in first..<(first + count) {
          guard let (key, value) = item, (try? sequence(fromKey: key)) == seq else {
            throw missing(level, index, "cannot be computed: entry \(seq) is missing")
          }
          frontier.append(leaf: MerkleHash.leafDigest(seq: seq, value: value), reportingFrom: 64) { _, _, _ in }
          item = try cursor.next()
        }
        return frontier.root
      }
    }
    func hash(_ level: Int, _ index: UInt64) throws -> [UInt8] {
      if level < storedLevel, index << UInt64(level) >= anchor { return try fromEntries(level, index) }
      if let hash = try txn.get(forKey: key(level: level, index: index), in: db), hash.count == MerkleHash.size {
        return hash
      }
      guard level > 0, level < storedLevel else { throw missing(level, index, "is missing") }
      return MerkleHash.node(try hash(level - 1, index * 2), try hash(level - 1, index * 2 + 1))
    }
    return hash
  }
}

extension ActionLog {
  /// Opens (creating if needed) the tree and checkpoint databases and the log id, and brings the
  /// tree up to `head`, in one write transaction per ``TreeStorage/buildChunk`` entries.
  ///
  /// Kill-safe: each transaction stores the subtrees of ``TreeStorage/storedLevel`` and above its
  /// entries complete, and the tree's size is read back from them (``TreeStorage/size(covered:end:)``),
  /// so an interrupted build continues where its last committed chunk ended. Returns `nil` (the log
  /// is left without a maintained tree) when the tree cannot follow the entries: entries it never
  /// covered were compacted away, or it covers more entries than the log holds (``verify(progress:)``
  /// reports that).
  static func openTree(
    _ env: Environment, entries: Database, meta: Database, anchor: ChainAnchor, head: ChainAnchor
  ) throws(LogError) -> TreeWriter? {
    guard maintainsTree.get() else { return nil }
    return try storage {
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
          let covered = try TreeStorage.coverage(txn, db)
          guard covered <= head.seq else { return .some(nil) }
          let size = TreeStorage.size(covered: covered, end: head.seq)
          guard size >= anchor.seq else { return .some(nil) }
          // The frontier's subtrees below the stored level come from the last (size mod 16) entries.
          // A stored subtree missing under the size is damage: the tree stops; verify() names the hash.
          let source = TreeStorage.subtree(txn, db, entries: entries, anchor: anchor.seq, path: env.path)
          guard var frontier = try? MerkleFrontier(size: size, subtree: source) else { return .some(nil) }
          guard size < head.seq else { return TreeWriter(db: db, frontier: frontier) }
          let last = min(head.seq, size + TreeStorage.buildChunk)
          let complete = try txn.withCursor(on: entries) { cursor -> Bool in
            var item = try withSequenceKey(size + 1) { try cursor.seek(atLeast: $0) }
            var seq = size + 1
            while seq <= last {
              // A gap stops the build where it is: verify() reports the missing entry.
              guard let (key, value) = item, (try? sequence(fromKey: key)) == seq else { return false }
              try frontier.append(
                leaf: MerkleHash.leafDigest(seq: seq, value: value), reportingFrom: TreeStorage.storedLevel
              ) { level, index, hash in
                try TreeStorage.put(level: level, index: index, hash: hash, txn, db)
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
