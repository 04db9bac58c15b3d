import CChronicleSHA256

/// The hashes an append computes for a batch of entries: each entry's chain hash and, when the
/// log keeps its Merkle tree, each entry's leaf hash.
///
/// The chain is sequential (entry i + 1's hash covers entry i's), and entry i's leaf covers its
/// stored value, chain hash included. Entry i's leaf and entry i + 1's chain hash therefore both
/// wait only for entry i's chain hash, and `CChronicleSHA256` hashes them together, their blocks
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
    guard !ends.isEmpty else { return [] }
    var digests = leaves ? [MerkleDigest](repeating: MerkleDigest(), count: ends.count) : []
    ends.withUnsafeBufferPointer { ends in
      digests.withUnsafeMutableBytes { out in
        compute(
          values, ends: ends, entries: 0..<ends.count, first: first,
          previous: previous.baseAddress!.assumingMemoryBound(to: UInt8.self),
          leaves: leaves ? out.baseAddress!.assumingMemoryBound(to: UInt8.self) : nil)
      }
    }
    return digests
  }

  /// The hashes of `entries`, a part of a batch laid out as ``compute(_:ends:first:previous:leaves:)``
  /// has it: writes their chain hashes, and their leaf hashes to `leaves + 32 i` for entry `i` when
  /// `leaves` is not `nil`. `first` is the batch's first sequence number and `previous` the chain
  /// hash of the entry before `entries` (a batch is hashed part by part as its parts are sealed).
  static func compute(
    _ values: UnsafeMutableRawBufferPointer, ends: UnsafeBufferPointer<Int>, entries: Range<Int>, first: UInt64,
    previous: UnsafePointer<UInt8>, leaves: UnsafeMutablePointer<UInt8>?
  ) {
    precondition(
      entries.upperBound <= ends.count && (ends.last ?? 0) <= values.count, "entry hashes need the values they end")
    guard !entries.isEmpty, let base = values.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    let start = entries.lowerBound == 0 ? 0 : ends[entries.lowerBound - 1]
    csha256_entries(
      base, start, ends.baseAddress! + entries.lowerBound, entries.count, first + UInt64(entries.lowerBound), previous,
      leaves.map { $0 + 32 * entries.lowerBound })
  }

  /// The leaf hashes alone of `entries`, a part of a batch laid out as
  /// ``compute(_:ends:first:previous:leaves:)`` has it, whose chain hashes are written: to
  /// `leaves + 32 i` for entry `i`. (A large batch's leaves are hashed on a second thread behind
  /// its chain: ``BatchPipeline``.)
  static func leaves(
    _ values: UnsafeRawBufferPointer, ends: UnsafeBufferPointer<Int>, entries: Range<Int>, first: UInt64,
    into leaves: UnsafeMutablePointer<UInt8>
  ) {
    precondition(
      entries.upperBound <= ends.count && (ends.last ?? 0) <= values.count, "leaf hashes need the values they end")
    guard !entries.isEmpty, let base = values.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    let start = entries.lowerBound == 0 ? 0 : ends[entries.lowerBound - 1]
    csha256_leaves(
      base, start, ends.baseAddress! + entries.lowerBound, entries.count, first + UInt64(entries.lowerBound),
      leaves + 32 * entries.lowerBound)
  }
}
