import Crypto
import Foundation

/// One AES-256 key of a log's ``KeyRing``, and its key identifier.
///
/// The identifier is derived from the key (`docs/log-format.md`, *Encrypted records*): the first
/// four bytes of `SHA-256("chronicle-key-id" ‖ key)`, big-endian. Every encrypted record names the
/// key that sealed it by this identifier; the key itself is never written into the log.
///
/// ```swift
/// let key = EncryptionKey.random()
/// let ring = try KeyRing([key])
/// ```
public struct EncryptionKey: Sendable, Hashable, CustomStringConvertible {
  /// The key identifier stored in the records this key seals.
  public let id: UInt32
  /// The key material (kept as bytes: swift-crypto's `SymmetricKey` is not `Sendable`).
  let bytes: [UInt8]
  /// The key as swift-crypto takes it, made once.
  var key: SymmetricKey { box.key }
  private let box: SymmetricKeyBox

  /// Wraps 32 bytes of key material.
  ///
  /// - Throws: ``LogError/invalidKey(reason:)`` when `bytes` is not 32 bytes long.
  public init(bytes: [UInt8]) throws {
    guard bytes.count == 32 else {
      throw LogError.invalidKey(reason: "an AES-256 key has 32 bytes, not \(bytes.count)")
    }
    self.init(checked: bytes)
  }

  /// Wraps bytes known to be 32 long.
  private init(checked bytes: [UInt8]) {
    self.bytes = bytes
    box = SymmetricKeyBox(key: SymmetricKey(data: bytes))
    id = Self.identifier(of: bytes)
  }

  /// A new key from the system's secure random number generator.
  public static func random() -> EncryptionKey {
    var generator = SystemRandomNumberGenerator()
    return EncryptionKey(checked: (0..<32).map { _ in generator.next() })
  }

  /// The key's identifier as eight lower-case hex digits, as tools and errors print it.
  public var idText: String { Self.text(id) }

  /// The identifier (never the key), for logs and messages.
  public var description: String { "key \(idText)" }

  /// `SHA-256("chronicle-key-id" ‖ key)[0..<4]`, big-endian.
  static func identifier(of bytes: [UInt8]) -> UInt32 {
    var hasher = SHA256()
    hasher.update(data: Array("chronicle-key-id".utf8))
    hasher.update(data: bytes)
    return hasher.finalize().prefix(4).reduce(UInt32.zero) { $0 << 8 | UInt32($1) }
  }

  /// A key identifier as eight lower-case hex digits, as tools and errors print it.
  public static func idText(_ id: UInt32) -> String { text(id) }

  /// Eight lower-case hex digits.
  static func text(_ id: UInt32) -> String {
    let digits = String(id, radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
  }

  /// Two keys are equal when their bytes are.
  public static func == (lhs: EncryptionKey, rhs: EncryptionKey) -> Bool { lhs.bytes == rhs.bytes }

  /// Hashes the identifier only.
  public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// One `SymmetricKey`, shared by the copies of an ``EncryptionKey``.
// @unchecked Sendable: `key` is immutable after `init`, and swift-crypto never mutates a
// `SymmetricKey`'s storage after its initializer (it is not declared `Sendable` on every platform).
final class SymmetricKeyBox: @unchecked Sendable {
  let key: SymmetricKey
  init(key: SymmetricKey) { self.key = key }
}
