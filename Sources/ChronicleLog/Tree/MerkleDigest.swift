import CChronicleSHA256

/// A 32-byte SHA-256 hash held inline (four words, no heap storage): what the tree's hot paths
/// (appends, verification) pass around instead of `[UInt8]`, one allocation fewer per hash.
struct MerkleDigest: Sendable, Hashable {
  // Exactly 32 bytes with no padding: arrays of digests are handed to `CChronicleSHA256` as consecutive hashes.
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
  static func leafDigest(seq: UInt64, value: UnsafeRawBufferPointer, path: SHA256Path = .current) -> MerkleDigest {
    var hasher = StackSHA256(path: path)
    withUnsafeBytes(of: UInt8(0x00)) { hasher.update($0) }
    hasher.update(bigEndian: seq)
    hasher.update(value)
    var digest = MerkleDigest()
    digest.withUnsafeMutableBytes { hasher.finalize(into: $0) }
    return digest
  }

  /// `SHA-256(0x01 ‖ left ‖ right)`, inline.
  static func nodeDigest(_ left: MerkleDigest, _ right: MerkleDigest, path: SHA256Path = .current) -> MerkleDigest {
    var digest = MerkleDigest()
    left.withUnsafeBytes { left in
      right.withUnsafeBytes { right in
        digest.withUnsafeMutableBytes { out in
          switch path {
          case .cpuExtensions: csha256_node(bytes(left), bytes(right), mutableBytes(out))
          case .swiftCrypto:
            var hasher = StackSHA256(path: path)
            withUnsafeBytes(of: UInt8(0x01)) { hasher.update($0) }
            hasher.update(left)
            hasher.update(right)
            hasher.finalize(into: out)
          }
        }
      }
    }
    return digest
  }

  /// One level of the tree above `children`, consecutive complete subtrees of one level: the
  /// node over `waiting` (the left sibling of `children[0]`) and `children[0]` when `waiting` is
  /// given, then over each following pair, hashed two at a time; a last child without a sibling is
  /// left out. Replaces the contents of `parents`.
  static func parents(
    of children: [MerkleDigest], after waiting: MerkleDigest?, into parents: inout [MerkleDigest],
    path: SHA256Path = .current
  ) {
    let first = waiting != nil && !children.isEmpty ? 1 : 0
    let count = first + (children.count - first) / 2
    parents.removeAll(keepingCapacity: true)
    guard count > 0 else { return }
    guard path == .cpuExtensions else {
      if let waiting { parents.append(nodeDigest(waiting, children[0], path: path)) }
      for pair in stride(from: first, to: children.count - 1, by: 2) {
        parents.append(nodeDigest(children[pair], children[pair + 1], path: path))
      }
      return
    }
    parents.append(contentsOf: repeatElement(MerkleDigest(), count: count))
    let left = waiting ?? MerkleDigest()
    left.withUnsafeBytes { left in
      children.withUnsafeBytes { childBytes in
        parents.withUnsafeMutableBytes { out in
          let written = csha256_level(
            waiting == nil ? nil : bytes(left), bytes(childBytes), children.count, mutableBytes(out))
          precondition(written == count, "a tree level of \(children.count) subtrees has \(count) parents, not \(written)")
        }
      }
    }
  }

  private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
    buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
  }

  private static func mutableBytes(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
    buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
  }
}
