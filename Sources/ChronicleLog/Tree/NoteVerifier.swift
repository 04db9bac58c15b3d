import Crypto
import Foundation

/// Checks signatures by one named key: a C2SP signed-note verifier key.
///
/// Its text is `name+<8 hex digits of key ID>+base64(type ‖ public key)`, the key ID being the
/// first 4 bytes of `SHA-256(name ‖ 0x0A ‖ type ‖ public key)`:
///
/// ```swift
/// let verifier = try NoteVerifier(parsing: "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
/// try note.verify(by: verifier)
/// ```
public struct NoteVerifier: Sendable, Hashable, CustomStringConvertible {
  /// The key's name (the log's origin, or a witness's name).
  public let name: String
  /// What the key signs.
  public let type: NoteKeyType
  /// The 4-byte key ID.
  public let keyID: [UInt8]
  /// The 32-byte Ed25519 public key.
  public let publicKey: [UInt8]

  /// A verifier for `publicKey` (32 bytes) under `name`.
  ///
  /// - Throws: ``TreeError/malformedKey(_:)`` for a bad name or key length.
  public init(name: String, publicKey: [UInt8], type: NoteKeyType = .ed25519) throws {
    try NoteVerifier.checkName(name)
    guard publicKey.count == 32, (try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)) != nil else {
      throw TreeError.malformedKey("an Ed25519 public key has 32 bytes, not \(publicKey.count)")
    }
    self.name = name
    self.type = type
    self.publicKey = publicKey
    self.keyID = NoteVerifier.keyID(name: name, type: type, publicKey: publicKey)
  }

  /// Parses a verifier key text `name+hexID+base64(type ‖ key)`, checking that the ID fits the key.
  ///
  /// - Throws: ``TreeError/malformedKey(_:)`` saying which part is wrong.
  public init(parsing text: String) throws {
    let parts = text.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3 else { throw TreeError.malformedKey("a verifier key is name+id+key, found '\(text.prefix(60))'") }
    guard parts[1].count == 8, let id = Self.hexBytes(parts[1]) else {
      throw TreeError.malformedKey("the key ID '\(parts[1])' is not 8 hexadecimal digits")
    }
    guard let data = Data(base64Encoded: parts[2]), data.count == 33,
      let type = NoteKeyType(rawValue: data[data.startIndex])
    else {
      throw TreeError.malformedKey("the key of '\(parts[0])' is not base64 of a type byte (1 or 4) and 32 bytes")
    }
    try self.init(name: parts[0], publicKey: Array(data.dropFirst()), type: type)
    guard keyID == id else {
      throw TreeError.malformedKey("the key ID \(parts[1]) of '\(parts[0])' does not match its key (\(keyID.hex))")
    }
  }

  /// The verifier key text.
  public var text: String {
    "\(name)+\(keyID.hex)+\(Data([type.rawValue] + publicKey).base64EncodedString())"
  }

  /// The key text.
  public var description: String { text }

  /// Whether `signature` is a valid Ed25519 signature of `message` by this key.
  public func isValidSignature(_ signature: [UInt8], of message: [UInt8]) -> Bool {
    guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
    return key.isValidSignature(signature, for: message)
  }

  /// `SHA-256(name ‖ 0x0A ‖ type ‖ key)[0..<4]`.
  static func keyID(name: String, type: NoteKeyType, publicKey: [UInt8]) -> [UInt8] {
    Array(SHA256.hash(data: Array(name.utf8) + [0x0A, type.rawValue] + publicKey).prefix(4))
  }

  /// A key name is non-empty UTF-8 without spaces, newlines or `+`.
  static func checkName(_ name: String) throws {
    guard !name.isEmpty else { throw TreeError.malformedKey("the key name is empty") }
    guard !name.unicodeScalars.contains(where: { $0 == "+" || $0.properties.isWhitespace || $0.value < 0x20 })
    else { throw TreeError.malformedKey("the key name '\(name.prefix(40))' contains a space, a control character or '+'") }
  }

  static func hexBytes(_ text: String) -> [UInt8]? {
    guard text.utf8.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
      let next = text.index(index, offsetBy: 2)
      guard let byte = UInt8(text[index..<next], radix: 16), text[index..<next].allSatisfy(\.isHexDigit) else {
        return nil
      }
      bytes.append(byte)
      index = next
    }
    return bytes
  }
}
