/// The hashes of the complete subtrees left to right that make up a tree of `size` leaves
/// (one per set bit of `size`, largest first): enough to append leaves and compute the root.
struct MerkleFrontier: Sendable, Hashable {
  /// A complete subtree the last append finished: its level, index and hash.
  struct Completed: Hashable {
    var level: Int
    var index: UInt64
    var hash: [UInt8]
  }

  private(set) var size: UInt64 = 0
  private(set) var hashes: [[UInt8]] = []

  init() {}

  /// The frontier of the tree of `size` leaves, from the stored complete subtrees.
  init(size: UInt64, subtree: (_ level: Int, _ index: UInt64) throws -> [UInt8]) rethrows {
    self.size = size
    var offset: UInt64 = 0
    for level in stride(from: 63, through: 0, by: -1) where size >> level & 1 == 1 {
      hashes.append(try subtree(level, offset >> level))
      offset += 1 << level
    }
  }

  /// Adds a leaf; returns the leaf and every subtree it completes, lowest level first.
  @discardableResult
  mutating func append(leaf: [UInt8]) -> [Completed] {
    var completed = [Completed(level: 0, index: size, hash: leaf)]
    var hash = leaf
    var level = 0
    let newSize = size + 1
    while size >> level & 1 == 1 {
      hash = MerkleHash.node(hashes.removeLast(), hash)
      level += 1
      completed.append(Completed(level: level, index: (newSize >> level) - 1, hash: hash))
    }
    hashes.append(hash)
    size = newSize
    return completed
  }

  /// The root of the tree so far.
  var root: [UInt8] {
    guard var acc = hashes.last else { return MerkleHash.emptyRoot }
    for hash in hashes.dropLast().reversed() { acc = MerkleHash.node(hash, acc) }
    return acc
  }
}
