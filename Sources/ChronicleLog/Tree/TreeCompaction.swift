import Foundation
import ChronicleLMDB

// MARK: - What compaction keeps of the tree

extension TreeStorage {
  /// A complete subtree: its level and index.
  struct Node: Hashable, Comparable {
    var level: Int
    var index: UInt64

    /// Where its leaves end: `(index + 1) · 2^level` (`UInt64.max` for a key no tree could hold).
    var end: UInt64 { index < UInt64.max >> UInt64(level) ? (index + 1) << UInt64(level) : .max }

    static func < (lhs: Node, rhs: Node) -> Bool { (lhs.level, lhs.index) < (rhs.level, rhs.index) }
  }

  /// The anchor's frontier: for each set bit `l` of `anchor`, the subtree at level `l`, index
  /// `(anchor >> l) − 1`. With the entries after it, the root of every tree of `anchor` entries or
  /// more and every proof over the remaining entries.
  static func frontier(_ anchor: UInt64) -> [Node] {
    (0..<64).filter { anchor >> UInt64($0) & 1 == 1 }.map { Node(level: $0, index: (anchor >> UInt64($0)) - 1) }
  }

  /// The subtrees that the root of the tree of `size` entries and the consistency proofs from it
  /// to larger trees need, and that lie wholly left of `anchor` (nothing else can recompute them once
  /// their entries are gone). With `t` the trailing zero bits of `size`: the subtree at level `t`
  /// ending at `size`, and the sibling at each level from `t` up of the subtree holding leaf
  /// `size − 1` (RFC 9162 §2.1.4.1 descends no lower). They include the frontier of `size`.
  static func neededNodes(checkpoint size: UInt64, anchor: UInt64) -> [Node] {
    guard size > 0, size < anchor else { return [] }
    let t = size.trailingZeroBitCount
    var nodes = [Node(level: t, index: (size >> UInt64(t)) - 1)]
    for level in t..<63 where UInt64(1) << UInt64(level) <= anchor {
      nodes.append(Node(level: level, index: ((size - 1) >> UInt64(level)) ^ 1))
    }
    return nodes.filter { $0.end <= anchor }
  }

  /// Every subtree left of `anchor` a log compacted to `anchor` keeps: the anchor's frontier and
  /// what the stored checkpoints of `checkpointSizes` smaller than the anchor need.
  static func keptNodes(anchor: UInt64, checkpointSizes: [UInt64]) -> Set<Node> {
    var kept = Set(frontier(anchor))
    for size in checkpointSizes { kept.formUnion(neededNodes(checkpoint: size, anchor: anchor)) }
    return kept
  }

  /// The tree sizes of the checkpoints stored in `txn` (none when the log has no checkpoint database).
  static func checkpointSizes(_ txn: Transaction) throws -> [UInt64] {
    guard let db = try? txn.openDatabase(named: checkpointsName) else { return [] }
    return try txn.withCursor(on: db) { cursor in
      var sizes: [UInt64] = []
      var item = try cursor.first()
      while let (key, _) = item {
        sizes.append(try sequence(fromKey: key))
        item = try cursor.next()
      }
      return sizes
    }
  }

  /// The hashes a compaction from `previousAnchor` to `anchor` keeps: those of
  /// ``keptNodes(anchor:checkpointSizes:)``, read where stored, the others (below ``storedLevel``)
  /// computed from the entries still there or the hashes an earlier compaction kept.
  ///
  /// A log without a tree database, or one compacted before it had a tree (an anchor and not a
  /// single stored hash), has nothing to keep: nothing commits to its removed entries. Otherwise
  /// every hash must be found: a missing one is damage (``ActionLog/verify(progress:)`` does not
  /// look left of the anchor).
  ///
  /// - Throws: ``TreeError/missingHash(path:reason:)`` naming the hash that cannot be computed: the
  ///   compaction must then change nothing.
  static func compactionHashes(
    _ txn: Transaction, entries: Database, previousAnchor: UInt64, anchor: UInt64, path: String
  ) throws -> [(Node, [UInt8])] {
    guard anchor > previousAnchor, let db = try? txn.openDatabase(named: treeName) else { return [] }
    if previousAnchor > 0, try txn.withCursor(on: db, { try $0.first() }) == nil { return [] }
    let source = subtree(txn, db, entries: entries, anchor: previousAnchor, path: path)
    var hashes: [(Node, [UInt8])] = []
    for node in keptNodes(anchor: anchor, checkpointSizes: try checkpointSizes(txn)).sorted() {
      let first = node.index << UInt64(node.level) + 1
      if let stored = try txn.get(forKey: key(level: node.level, index: node.index), in: db),
        stored.count == MerkleHash.size
      {
        hashes.append((node, stored))
        continue
      }
      do { hashes.append((node, try source(node.level, node.index))) } catch {
        throw TreeError.missingHash(
          path: path,
          reason: "compacting through entry \(anchor) must keep the tree hash of entries \(first)…\(node.end) "
            + "(level \(node.level), index \(node.index)), and it cannot be found (\(error)); nothing was changed")
      }
    }
    return hashes
  }

  /// Compaction's hook, in its transaction before the entries through `anchor` are deleted:
  /// stores ``compactionHashes(_:entries:previousAnchor:anchor:path:)`` and removes every other
  /// stored subtree that ends at or before the anchor. Keeping all the subtrees of level 4 and more
  /// left of the anchor would cost about 13 bytes per removed entry (one hash per 8 entries in
  /// LMDB pages); the kept ones are a few dozen per stored checkpoint older than the anchor, and
  /// every checkpoint the log signs is stored.
  static func keepForCompaction(
    _ txn: Transaction, entries: Database, previousAnchor: UInt64, anchor: UInt64, path: String
  ) throws {
    let hashes = try compactionHashes(
      txn, entries: entries, previousAnchor: previousAnchor, anchor: anchor, path: path)
    guard anchor > previousAnchor, let db = try? txn.openDatabase(named: treeName) else { return }
    for (node, hash) in hashes { try txn.put(hash, forKey: key(level: node.level, index: node.index), in: db) }
    let kept = Set(hashes.map(\.0))
    try txn.withCursor(on: db) { cursor in
      for level in 0..<64 where anchor >> UInt64(level) > 0 {
        var item = try key(level: level, index: 0).withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let (key, _) = item, key.count == 9, key[0] == UInt8(level) {
          let node = Node(level: level, index: key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
          guard node.end <= anchor else { break }
          if kept.contains(node) {
            item = try cursor.next()
          } else {
            try cursor.deleteCurrent()
            item = try self.key(level: level, index: node.index + 1).withUnsafeBytes { try cursor.seek(atLeast: $0) }
          }
        }
      }
    }
  }

  /// The stored subtrees that lie wholly left of `anchor`, in key order: what an export carries so
  /// that the imported log has the same tree (``MerkleFrontier`` of the anchor included).
  static func storedLeft(of anchor: UInt64, _ txn: Transaction) throws -> [(Node, [UInt8])] {
    guard anchor > 0, let db = try? txn.openDatabase(named: treeName) else { return [] }
    return try txn.withCursor(on: db) { cursor in
      var found: [(Node, [UInt8])] = []
      for level in 0..<64 where anchor >> UInt64(level) > 0 {
        var item = try key(level: level, index: 0).withUnsafeBytes { try cursor.seek(atLeast: $0) }
        while let (key, value) = item, key.count == 9, key[0] == UInt8(level) {
          let node = Node(level: level, index: key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
          guard node.end <= anchor else { break }
          found.append((node, Array(value)))
          item = try cursor.next()
        }
      }
      return found
    }
  }

  /// The hash of the complete subtree `(level, index)` from `stored` alone (hashes left of an
  /// anchor): stored, or below ``storedLevel`` combined from its halves.
  static func lookup(_ stored: [Node: [UInt8]], level: Int, index: UInt64) -> [UInt8]? {
    if let hash = stored[Node(level: level, index: index)] { return hash }
    guard level > 0, level < storedLevel, let left = lookup(stored, level: level - 1, index: index * 2),
      let right = lookup(stored, level: level - 1, index: index * 2 + 1)
    else { return nil }
    return MerkleHash.node(left, right)
  }
}
