import CSHA256

/// A 32-byte SHA-256 hash held inline (four words, no heap storage): what the tree's hot paths
/// (appends, verification) pass around instead of `[UInt8]`, one allocation fewer per hash.
struct MerkleDigest: Sendable, Hashable {
  private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

  /// 32 zero bytes.
  init() {}

  /// The hash in `bytes` (exactly ``MerkleHash/size`` bytes).
  init(_ bytes: UnsafeRawBufferPointer) {
    precondition(bytes.count == MerkleHash.size, "a tree hash is \(MerkleHash.size) bytes, not \(bytes.count)")
    Swift.withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
  }

  /// The hash in `bytes` (exactly ``MerkleHash/size`` bytes).
  init(_ bytes: [UInt8]) {
    self = bytes.withUnsafeBytes { MerkleDigest($0) }
  }

  /// The bytes of the hash, in order.
  var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

  func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try Swift.withUnsafeBytes(of: words, body)
  }

  mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
    try Swift.withUnsafeMutableBytes(of: &words, body)
  }

  /// `true` when `bytes` holds this hash.
  func equals(_ bytes: UnsafeRawBufferPointer) -> Bool {
    bytes.count == MerkleHash.size && withUnsafeBytes { $0.elementsEqual(bytes) }
  }

  static func == (lhs: MerkleDigest, rhs: MerkleDigest) -> Bool {
    lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
      && lhs.words.3 == rhs.words.3
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(words.0)
    hasher.combine(words.1)
    hasher.combine(words.2)
    hasher.combine(words.3)
  }
}

extension MerkleHash {
  /// The leaf hash of entry `seq` whose stored value is `value`, inline.
  static func leafDigest(seq: UInt64, value: UnsafeRawBufferPointer) -> MerkleDigest {
    var hasher = StackSHA256()
    withUnsafeBytes(of: UInt8(0x00)) { hasher.update($0) }
    hasher.update(bigEndian: seq)
    hasher.update(value)
    var digest = MerkleDigest()
    digest.withUnsafeMutableBytes { hasher.finalize(into: $0) }
    return digest
  }

  /// `SHA-256(0x01 ‖ left ‖ right)`, inline.
  static func nodeDigest(_ left: MerkleDigest, _ right: MerkleDigest) -> MerkleDigest {
    var digest = MerkleDigest()
    left.withUnsafeBytes { left in
      right.withUnsafeBytes { right in
        digest.withUnsafeMutableBytes { csha256_node(bytes(left), bytes(right), mutableBytes($0)) }
      }
    }
    return digest
  }

  /// `nodeDigest(a, b)` and `nodeDigest(c, d)`, their blocks hashed interleaved.
  static func nodeDigests(
    _ a: MerkleDigest, _ b: MerkleDigest, _ c: MerkleDigest, _ d: MerkleDigest
  ) -> (MerkleDigest, MerkleDigest) {
    var first = MerkleDigest()
    var second = MerkleDigest()
    a.withUnsafeBytes { a in
      b.withUnsafeBytes { b in
        c.withUnsafeBytes { c in
          d.withUnsafeBytes { d in
            first.withUnsafeMutableBytes { outA in
              second.withUnsafeMutableBytes { outB in
                csha256_node2(bytes(a), bytes(b), mutableBytes(outA), bytes(c), bytes(d), mutableBytes(outB))
              }
            }
          }
        }
      }
    }
    return (first, second)
  }

  private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
    buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
  }

  private static func mutableBytes(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
    buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
  }
}
