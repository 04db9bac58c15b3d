/// The hashes an append computes for a batch of entries: each entry's chain hash and, when the
/// log keeps its Merkle tree, each entry's leaf hash.
///
/// The chain is sequential (entry i + 1's hash covers entry i's), and entry i's leaf covers its
/// stored value, chain hash included. Entry i's leaf and entry i + 1's chain hash therefore both
/// wait only for entry i's chain hash, and they are hashed together, their blocks interleaved
/// through the CPU's SHA unit (``StackSHA256/update(_:_:_:_:)``): the tree's leaves then cost
/// little more than the chain alone.
enum EntryHashes {
  /// Writes each entry's chain hash into the last ``EntryFormat/hashSize`` bytes of its stored
  /// value, and returns the entries' leaf hashes when `leaves` is `true` (else nothing).
  ///
  /// - Parameters:
  ///   - values: the stored values of entries `first…`, one after another, each ending with room
  ///     for its chain hash.
  ///   - ends: where each value ends in `values`.
  ///   - previous: the chain hash of entry `first − 1` (``Chain/genesis`` for the first entry).
  static func compute(
    _ values: UnsafeMutableRawBufferPointer, ends: [Int], first: UInt64, previous: UnsafeRawBufferPointer,
    leaves: Bool
  ) -> [MerkleDigest] {
    let hashSize = EntryFormat.hashSize
    func start(_ index: Int) -> Int { index == 0 ? 0 : ends[index - 1] }
    func body(_ index: Int) -> UnsafeRawBufferPointer {
      UnsafeRawBufferPointer(rebasing: values[start(index)..<(ends[index] - hashSize)])
    }
    func chainHash(_ index: Int) -> UnsafeMutableRawBufferPointer {
      UnsafeMutableRawBufferPointer(rebasing: values[(ends[index] - hashSize)..<ends[index]])
    }
    /// The chain hasher of entry `index`, fed everything but the body.
    func chain(_ index: Int) -> StackSHA256 {
      Chain.start(previous: index == 0 ? previous : UnsafeRawBufferPointer(chainHash(index - 1)), seq: first + UInt64(index))
    }

    var hasher = chain(0)
    hasher.update(body(0))
    hasher.finalize(into: chainHash(0))
    guard leaves else {
      for index in ends.indices.dropFirst() {
        var hasher = chain(index)
        hasher.update(body(index))
        hasher.finalize(into: chainHash(index))
      }
      return []
    }
    var digests: [MerkleDigest] = []
    digests.reserveCapacity(ends.count)
    for index in ends.indices {
      var leaf = MerkleHash.leafHasher(seq: first + UInt64(index))
      let value = UnsafeRawBufferPointer(rebasing: values[start(index)..<ends[index]])
      var digest = MerkleDigest()
      if index + 1 < ends.count {
        var next = chain(index + 1)
        StackSHA256.update(&leaf, value, &next, body(index + 1))
        digest.withUnsafeMutableBytes { StackSHA256.finalize(&leaf, into: $0, &next, into: chainHash(index + 1)) }
      } else {
        leaf.update(value)
        digest.withUnsafeMutableBytes { leaf.finalize(into: $0) }
      }
      digests.append(digest)
    }
    return digests
  }
}
