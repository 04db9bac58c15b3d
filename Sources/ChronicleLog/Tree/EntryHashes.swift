import CSHA256

/// The hashes an append computes for a batch of entries: each entry's chain hash and, when the
/// log keeps its Merkle tree, each entry's leaf hash.
///
/// The chain is sequential (entry i + 1's hash covers entry i's), and entry i's leaf covers its
/// stored value, chain hash included. Entry i's leaf and entry i + 1's chain hash therefore both
/// wait only for entry i's chain hash, and `CSHA256` hashes them together, their blocks
/// interleaved through the CPU's SHA unit: the tree's leaves then cost little more than the
/// chain alone.
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
    precondition(
      previous.count == EntryFormat.hashSize && (ends.last ?? 0) <= values.count,
      "entry hashes need a 32-byte previous hash and the values they end")
    guard let base = values.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return [] }
    let previousBytes = previous.baseAddress!.assumingMemoryBound(to: UInt8.self)
    guard leaves else {
      csha256_entries(base, ends, ends.count, first, previousBytes, nil)
      return []
    }
    var digests = [MerkleDigest](repeating: MerkleDigest(), count: ends.count)
    digests.withUnsafeMutableBytes { out in
      csha256_entries(base, ends, ends.count, first, previousBytes, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
    return digests
  }
}
