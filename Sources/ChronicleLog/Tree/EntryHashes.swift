import CChronicleSHA256

/// The hashes an append computes for a batch of entries: each entry's chain hash and, when the
/// log keeps its Merkle tree, each entry's leaf hash.
///
/// The chain is sequential (entry i + 1's hash covers entry i's), and entry i's leaf covers its
/// stored value, chain hash included. Entry i's leaf and entry i + 1's chain hash therefore both
/// wait only for entry i's chain hash, and on the CPU's SHA extensions they are hashed together, their blocks
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
  ///   - path: how to hash (the process's path; the tests compare both).
  static func compute(
    _ values: UnsafeMutableRawBufferPointer, ends: [Int], first: UInt64, previous: UnsafeRawBufferPointer,
    leaves: Bool, path: SHA256Path = .current
  ) -> [MerkleDigest] {
    precondition(
      previous.count == EntryFormat.hashSize && (ends.last ?? 0) <= values.count,
      "entry hashes need a 32-byte previous hash and the values they end")
    guard !ends.isEmpty, let base = values.baseAddress else { return [] }
    var digests = leaves ? [MerkleDigest](repeating: MerkleDigest(), count: ends.count) : []
    switch path {
    case .cpuExtensions:
      ends.withUnsafeBufferPointer { ends in
        digests.withUnsafeMutableBytes { out in
          csha256_entries(
            base.assumingMemoryBound(to: UInt8.self), 0, ends.baseAddress!, ends.count, first,
            previous.baseAddress!.assumingMemoryBound(to: UInt8.self),
            leaves ? out.baseAddress!.assumingMemoryBound(to: UInt8.self) : nil)
        }
      }
    case .swiftCrypto:
      var start = 0
      var previous = previous
      for (index, end) in ends.enumerated() {
        let seq = first + UInt64(index)
        let hash = UnsafeMutableRawBufferPointer(rebasing: values[(end - EntryFormat.hashSize)..<end])
        Chain.hash(
          previous: previous, seq: seq, body: UnsafeRawBufferPointer(rebasing: values[start..<(end - EntryFormat.hashSize)]),
          into: hash, path: path)
        if leaves {
          digests[index] = MerkleHash.leafDigest(
            seq: seq, value: UnsafeRawBufferPointer(rebasing: values[start..<end]), path: path)
        }
        previous = UnsafeRawBufferPointer(hash)
        start = end
      }
    }
    return digests
  }
}
