/// The algorithms of RFC 9162 §2.1 over a tree whose complete subtrees are stored.
///
/// A *complete subtree* at `level` and `index` covers the leaves
/// `[index · 2^level, (index + 1) · 2^level)`; its hash is what a source returns for
/// `(level, index)` (a leaf hash at level 0). Roots and proofs combine O(log n) such hashes
/// and never look at the leaves' data:
///
/// ```swift
/// let root = try MerkleTree.root(size: 5) { level, index in try stored(level, index) }
/// let path = try MerkleTree.inclusionProof(index: 2, size: 5) { try stored($0, $1) }
/// try MerkleTree.verifyInclusion(leafHash: leaf, index: 2, size: 5, proof: path, root: root)
/// ```
public enum MerkleTree {
  /// The largest power of two strictly smaller than `n` (`n ≥ 2`): where RFC 9162 splits a tree of `n` leaves.
  static func split(_ n: UInt64) -> UInt64 {
    UInt64(1) << (63 - (n - 1).leadingZeroBitCount)
  }

  /// The hash of the leaves `[start, end)`, a node of the tree (`start` aligned to the split of its size).
  static func rangeHash(
    _ start: UInt64, _ end: UInt64, _ subtree: (_ level: Int, _ index: UInt64) throws -> [UInt8]
  ) rethrows -> [UInt8] {
    let count = end - start
    if count & (count - 1) == 0, start % count == 0 {
      let level = count.trailingZeroBitCount
      return try subtree(level, start >> level)
    }
    let k = split(count)
    return MerkleHash.node(try rangeHash(start, start + k, subtree), try rangeHash(start + k, end, subtree))
  }

  /// The root of the tree of the first `size` leaves (``MerkleHash/emptyRoot`` for 0).
  public static func root(
    size: UInt64, subtree: (_ level: Int, _ index: UInt64) throws -> [UInt8]
  ) rethrows -> [UInt8] {
    size == 0 ? MerkleHash.emptyRoot : try rangeHash(0, size, subtree)
  }

  /// The inclusion proof (RFC 9162 §2.1.3.1 `PATH`) of leaf `index` in the tree of `size` leaves.
  ///
  /// - Throws: ``TreeError/outOfRange(_:)`` when `index ≥ size`, and whatever `subtree` throws.
  public static func inclusionProof(
    index: UInt64, size: UInt64, subtree: (_ level: Int, _ index: UInt64) throws -> [UInt8]
  ) throws -> [[UInt8]] {
    guard index < size else { throw TreeError.outOfRange("leaf \(index) is not in a tree of \(size) leaves") }
    var path: [[UInt8]] = []
    func walk(_ start: UInt64, _ end: UInt64) throws {
      guard end - start > 1 else { return }
      let k = split(end - start)
      if index < start + k {
        try walk(start, start + k)
        path.append(try rangeHash(start + k, end, subtree))
      } else {
        try walk(start + k, end)
        path.append(try rangeHash(start, start + k, subtree))
      }
    }
    try walk(0, size)
    return path
  }

  /// The consistency proof (RFC 9162 §2.1.4.1 `PROOF`) between the trees of `oldSize` and `newSize`
  /// leaves: empty when `oldSize` is 0 or equal to `newSize`.
  ///
  /// - Throws: ``TreeError/outOfRange(_:)`` when `oldSize > newSize`, and whatever `subtree` throws.
  public static func consistencyProof(
    from oldSize: UInt64, to newSize: UInt64, subtree: (_ level: Int, _ index: UInt64) throws -> [UInt8]
  ) throws -> [[UInt8]] {
    guard oldSize <= newSize else {
      throw TreeError.outOfRange("a tree of \(oldSize) leaves cannot be a prefix of one of \(newSize)")
    }
    guard oldSize > 0, oldSize < newSize else { return [] }
    var proof: [[UInt8]] = []
    func subproof(_ m: UInt64, _ start: UInt64, _ end: UInt64, _ complete: Bool) throws {
      let n = end - start
      if m == n {
        if !complete { proof.append(try rangeHash(start, end, subtree)) }
        return
      }
      let k = split(n)
      if m <= k {
        try subproof(m, start, start + k, complete)
        proof.append(try rangeHash(start + k, end, subtree))
      } else {
        try subproof(m - k, start + k, end, false)
        proof.append(try rangeHash(start, start + k, subtree))
      }
    }
    try subproof(oldSize, 0, newSize, true)
    return proof
  }

  // MARK: - Verification

  /// The root an inclusion proof leads to (RFC 9162 §2.1.3.2), or an error naming why it cannot.
  public static func rootFromInclusion(
    leafHash: [UInt8], index: UInt64, size: UInt64, proof: [[UInt8]]
  ) throws -> [UInt8] {
    guard index < size else { throw TreeError.invalidProof("leaf index \(index) is not below the tree size \(size)") }
    guard proof.allSatisfy({ $0.count == MerkleHash.size }) else {
      throw TreeError.invalidProof("a proof hash is not \(MerkleHash.size) bytes")
    }
    var fn = index
    var sn = size - 1
    var r = leafHash
    for p in proof {
      guard sn != 0 else {
        throw TreeError.invalidProof("the proof has \(proof.count) hashes, more than leaf \(index) of \(size) needs")
      }
      if fn & 1 == 1 || fn == sn {
        r = MerkleHash.node(p, r)
        if fn & 1 == 0 {
          while fn & 1 == 0, fn != 0 {
            fn >>= 1
            sn >>= 1
          }
        }
      } else {
        r = MerkleHash.node(r, p)
      }
      fn >>= 1
      sn >>= 1
    }
    guard sn == 0 else {
      throw TreeError.invalidProof("the proof has \(proof.count) hashes, fewer than leaf \(index) of \(size) needs")
    }
    return r
  }

  /// Checks that `proof` proves leaf `index` (hash `leafHash`) is in the tree of `size` leaves with root `root`.
  ///
  /// - Throws: ``TreeError/invalidProof(_:)`` saying what does not fit.
  public static func verifyInclusion(
    leafHash: [UInt8], index: UInt64, size: UInt64, proof: [[UInt8]], root: [UInt8]
  ) throws {
    guard try rootFromInclusion(leafHash: leafHash, index: index, size: size, proof: proof) == root else {
      throw TreeError.invalidProof("leaf \(index) with this proof does not lead to the root of the tree of \(size)")
    }
  }

  /// Checks that `proof` proves the tree of `oldSize` leaves (root `oldRoot`) is a prefix of the
  /// tree of `newSize` leaves (root `newRoot`), RFC 9162 §2.1.4.2. Equal sizes need equal roots and
  /// an empty proof; an empty old tree is a prefix of every tree.
  ///
  /// - Throws: ``TreeError/invalidProof(_:)`` saying what does not fit.
  public static func verifyConsistency(
    oldSize: UInt64, newSize: UInt64, oldRoot: [UInt8], newRoot: [UInt8], proof: [[UInt8]]
  ) throws {
    guard oldSize <= newSize else {
      throw TreeError.invalidProof("the old tree (\(oldSize)) is larger than the new one (\(newSize))")
    }
    guard proof.allSatisfy({ $0.count == MerkleHash.size }) else {
      throw TreeError.invalidProof("a proof hash is not \(MerkleHash.size) bytes")
    }
    if oldSize == 0 {
      guard proof.isEmpty else { throw TreeError.invalidProof("a proof from the empty tree must be empty") }
      return
    }
    if oldSize == newSize {
      guard proof.isEmpty else { throw TreeError.invalidProof("a proof between equal sizes must be empty") }
      guard oldRoot == newRoot else {
        throw TreeError.invalidProof("two trees of \(oldSize) leaves with different roots")
      }
      return
    }
    guard !proof.isEmpty else { throw TreeError.invalidProof("the proof from \(oldSize) to \(newSize) is empty") }
    var path = proof
    if oldSize & (oldSize - 1) == 0 { path.insert(oldRoot, at: 0) }
    var fn = oldSize - 1
    var sn = newSize - 1
    while fn & 1 == 1 {
      fn >>= 1
      sn >>= 1
    }
    var fr = path[0]
    var sr = path[0]
    for c in path.dropFirst() {
      guard sn != 0 else {
        throw TreeError.invalidProof("the proof from \(oldSize) to \(newSize) has more hashes than it needs")
      }
      if fn & 1 == 1 || fn == sn {
        fr = MerkleHash.node(c, fr)
        sr = MerkleHash.node(c, sr)
        if fn & 1 == 0 {
          while fn & 1 == 0, fn != 0 {
            fn >>= 1
            sn >>= 1
          }
        }
      } else {
        sr = MerkleHash.node(sr, c)
      }
      fn >>= 1
      sn >>= 1
    }
    guard sn == 0 else {
      throw TreeError.invalidProof("the proof from \(oldSize) to \(newSize) has fewer hashes than it needs")
    }
    guard fr == oldRoot else {
      throw TreeError.invalidProof("the proof does not lead to the old root: the tree of \(oldSize) is not a prefix")
    }
    guard sr == newRoot else {
      throw TreeError.invalidProof("the proof does not lead to the new root of the tree of \(newSize)")
    }
  }
}
