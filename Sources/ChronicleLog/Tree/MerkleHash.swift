import Crypto

/// The hashes of RFC 9162 §2.1: a leaf is `SHA-256(0x00 ‖ data)`, a node `SHA-256(0x01 ‖ left ‖ right)`.
///
/// A leaf of Chronicle's tree is one stored entry: `u64be(seq) ‖ value`, where `value` is the
/// entry's bytes exactly as the `entries` database holds them (body and chain hash):
///
/// ```swift
/// let leaf = MerkleHash.leaf(seq: 1, value: storedValue)
/// let root = MerkleHash.node(leaf, otherLeaf)
/// ```
public enum MerkleHash {
  /// The size of every hash, in bytes.
  public static let size = 32

  /// The root of the empty tree: SHA-256 of no bytes.
  public static let emptyRoot: [UInt8] = Array(SHA256.hash(data: [UInt8]()))

  /// `SHA-256(0x00 ‖ data)`.
  public static func leaf(_ data: some Sequence<UInt8>) -> [UInt8] {
    var hasher = StackSHA256()
    withUnsafeBytes(of: UInt8(0x00)) { hasher.update($0) }
    Array(data).withUnsafeBytes { hasher.update($0) }
    return hasher.finalize()
  }

  /// The leaf hash of entry `seq` whose stored value is `value`: `SHA-256(0x00 ‖ u64be(seq) ‖ value)`.
  public static func leaf(seq: UInt64, value: [UInt8]) -> [UInt8] {
    value.withUnsafeBytes { leaf(seq: seq, value: $0) }
  }

  /// The leaf hash of entry `seq` whose stored value is `value`, without copying it.
  static func leaf(seq: UInt64, value: UnsafeRawBufferPointer) -> [UInt8] {
    leafDigest(seq: seq, value: value).bytes
  }

  /// `SHA-256(0x01 ‖ left ‖ right)`.
  public static func node(_ left: [UInt8], _ right: [UInt8]) -> [UInt8] {
    var hasher = StackSHA256()
    withUnsafeBytes(of: UInt8(0x01)) { hasher.update($0) }
    left.withUnsafeBytes { hasher.update($0) }
    right.withUnsafeBytes { hasher.update($0) }
    return hasher.finalize()
  }
}
