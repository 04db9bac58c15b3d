/// The hashes of the complete subtrees left to right that make up a tree of `size` leaves
/// (one per set bit of `size`, largest first): enough to append leaves and compute the root.
///
/// The hashes are held inline (``MerkleDigest``) in one array reserved for the 64 a tree can
/// have, so appending a leaf allocates nothing: the append path hashes each leaf straight from
/// the stored value and hands the subtrees it completes to a closure.
struct MerkleFrontier: Sendable, Hashable {
  /// A complete subtree the last append finished: its level, index and hash.
  struct Completed: Hashable {
    var level: Int
    var index: UInt64
    var hash: [UInt8]
  }

  private(set) var size: UInt64 = 0
  private var stack: [MerkleDigest]

  init() {
    stack = []
    stack.reserveCapacity(64)
  }

  /// The frontier of the tree of `size` leaves, from the stored complete subtrees.
  init(size: UInt64, subtree: (_ level: Int, _ index: UInt64) throws -> [UInt8]) rethrows {
    self.init()
    self.size = size
    var offset: UInt64 = 0
    for level in stride(from: 63, through: 0, by: -1) where size >> level & 1 == 1 {
      stack.append(MerkleDigest(try subtree(level, offset >> level)))
      offset += 1 << level
    }
  }

  /// The frontier's hashes, largest subtree first.
  var hashes: [[UInt8]] { stack.map(\.bytes) }

  /// Adds a leaf and calls `completed` with every subtree it completes from `lowest` level up
  /// (the leaf itself is level 0), lowest level first. Allocates nothing.
  @inline(__always)
  mutating func append(
    leaf: MerkleDigest, reportingFrom lowest: Int = 0,
    _ completed: (_ level: Int, _ index: UInt64, _ hash: MerkleDigest) throws -> Void
  ) rethrows {
    if lowest == 0 { try completed(0, size, leaf) }
    var hash = leaf
    var level = 0
    let newSize = size + 1
    while size >> level & 1 == 1 {
      hash = MerkleHash.nodeDigest(stack.removeLast(), hash)
      level += 1
      if level >= lowest { try completed(level, (newSize >> level) - 1, hash) }
    }
    stack.append(hash)
    size = newSize
  }

  /// Adds a leaf; returns the leaf and every subtree it completes, lowest level first.
  @discardableResult
  mutating func append(leaf: [UInt8]) -> [Completed] {
    var all: [Completed] = []
    append(leaf: MerkleDigest(leaf)) { level, index, hash in
      all.append(Completed(level: level, index: index, hash: hash.bytes))
    }
    return all
  }

  /// The root of the tree so far, inline.
  var rootDigest: MerkleDigest? {
    guard var acc = stack.last else { return nil }
    for hash in stack.dropLast().reversed() { acc = MerkleHash.nodeDigest(hash, acc) }
    return acc
  }

  /// The root of the tree so far.
  var root: [UInt8] { rootDigest?.bytes ?? MerkleHash.emptyRoot }
}
