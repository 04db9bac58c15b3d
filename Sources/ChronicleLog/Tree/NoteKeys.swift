import Crypto
import Foundation

/// The signature algorithms of C2SP signed-note keys that Chronicle knows.
public enum NoteKeyType: UInt8, Sendable, Hashable {
  /// Ed25519 note signatures (signed-note `0x01`): the log signs its checkpoints with these.
  case ed25519 = 0x01
  /// Ed25519 cosignatures, C2SP tlog-cosignature v1 (`0x04`): witnesses sign with these.
  case cosignatureV1 = 0x04
}

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

/// Signs with one named Ed25519 key: a C2SP signed-note signer.
///
/// Its text, as Go's `golang.org/x/mod/sumdb/note` writes it, is
/// `PRIVATE+KEY+name+<hex key ID>+base64(type ‖ 32-byte seed)`. Keys come from the app; a log
/// never stores one.
///
/// ```swift
/// let signer = try NoteSigner.generate(name: "ledger.example/log")
/// try keyFile.write(signer.privateKeyText)          // keep secret
/// let verifierText = signer.verifier.text           // publish
/// ```
public struct NoteSigner: Sendable {
  /// The public half.
  public let verifier: NoteVerifier
  /// The 32-byte Ed25519 seed (the key is made from it when signing: `PrivateKey` is not `Sendable`).
  private let seed: [UInt8]

  /// The key's name.
  public var name: String { verifier.name }
  /// The 4-byte key ID.
  public var keyID: [UInt8] { verifier.keyID }

  /// A signer from a 32-byte Ed25519 seed.
  ///
  /// - Throws: ``TreeError/malformedKey(_:)`` for a bad name or seed.
  public init(name: String, seed: [UInt8], type: NoteKeyType = .ed25519) throws {
    guard seed.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
      throw TreeError.malformedKey("an Ed25519 seed has 32 bytes, not \(seed.count)")
    }
    self.seed = seed
    self.verifier = try NoteVerifier(name: name, publicKey: Array(key.publicKey.rawRepresentation), type: type)
  }

  /// A new random key.
  public static func generate(name: String, type: NoteKeyType = .ed25519) throws -> NoteSigner {
    try NoteSigner(name: name, seed: Array(Curve25519.Signing.PrivateKey().rawRepresentation), type: type)
  }

  /// Parses `PRIVATE+KEY+name+hexID+base64(type ‖ seed)`.
  ///
  /// - Throws: ``TreeError/malformedKey(_:)`` saying which part is wrong (never echoing the key).
  public init(parsing text: String) throws {
    let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
    let parts = trimmed.split(separator: "+", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 5, parts[0] == "PRIVATE", parts[1] == "KEY" else {
      throw TreeError.malformedKey("a signer key starts with PRIVATE+KEY+ and has a name, an id and a key")
    }
    guard parts[3].count == 8, let id = NoteVerifier.hexBytes(parts[3]) else {
      throw TreeError.malformedKey("the key ID '\(parts[3])' is not 8 hexadecimal digits")
    }
    guard let data = Data(base64Encoded: parts[4]), data.count == 33,
      let type = NoteKeyType(rawValue: data[data.startIndex])
    else {
      throw TreeError.malformedKey("the key of '\(parts[2])' is not base64 of a type byte (1 or 4) and a 32-byte seed")
    }
    try self.init(name: parts[2], seed: Array(data.dropFirst()), type: type)
    guard keyID == id else {
      throw TreeError.malformedKey("the key ID \(parts[3]) of '\(parts[2])' does not match its key")
    }
  }

  /// The signer key text (secret).
  public var privateKeyText: String {
    "PRIVATE+KEY+\(name)+\(keyID.hex)+\(Data([verifier.type.rawValue] + seed).base64EncodedString())"
  }

  /// The Ed25519 signature of `message` (64 bytes).
  public func sign(_ message: [UInt8]) throws -> [UInt8] {
    Array(try Curve25519.Signing.PrivateKey(rawRepresentation: seed).signature(for: message))
  }
}
