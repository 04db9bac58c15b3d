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

  /// Adds `leaves` and calls `completed` with every subtree they complete from `lowest` level up,
  /// level by level (each level's subtrees in order): the same subtrees, frontier and root as
  /// appending the leaves one by one, in another order.
  ///
  /// The subtrees one level completes are independent of each other, so their hashes are
  /// computed two at a time (``MerkleHash/parents(of:after:into:)``).
  mutating func append(
    leaves: [MerkleDigest], reportingFrom lowest: Int = 0,
    _ completed: (_ level: Int, _ index: UInt64, _ hash: MerkleDigest) throws -> Void
  ) rethrows {
    guard leaves.count > 1 else {
      if let leaf = leaves.first { try append(leaf: leaf, reportingFrom: lowest, completed) }
      return
    }
    let oldSize = size
    let newSize = size + UInt64(leaves.count)
    // The old frontier's subtree at each level where the old size has a bit: the left sibling
    // still waiting for the first new subtree of that level.
    var waiting = [MerkleDigest](repeating: MerkleDigest(), count: 64)
    var position = 0
    for level in stride(from: 63, through: 0, by: -1) where oldSize >> level & 1 == 1 {
      waiting[level] = stack[position]
      position += 1
    }
    stack.removeAll(keepingCapacity: true)
    // The level's new complete subtrees are those of indices (oldSize >> level) ..< (newSize >> level).
    var level = 0
    var current = leaves
    var next: [MerkleDigest] = []
    next.reserveCapacity(leaves.count / 2 + 1)
    var top: [MerkleDigest] = []  // the new subtree at each level where the new size has a bit, lowest first
    while true {
      let firstIndex = oldSize >> level
      if level >= lowest {
        for (offset, hash) in current.enumerated() { try completed(level, firstIndex + UInt64(offset), hash) }
      }
      if newSize >> level & 1 == 1 {
        top.append(current[current.count - 1])
      }
      if newSize >> (level + 1) == oldSize >> (level + 1) { break }
      // Pairs (2k, 2k + 1) of this level; an odd first index pairs with the waiting subtree.
      MerkleHash.parents(of: current, after: firstIndex & 1 == 1 ? waiting[level] : nil, into: &next)
      swap(&current, &next)
      level += 1
    }
    // Levels above the last new subtree keep their waiting subtree.
    for higher in stride(from: 63, to: level, by: -1) where newSize >> higher & 1 == 1 {
      stack.append(waiting[higher])
    }
    stack.append(contentsOf: top.reversed())
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
