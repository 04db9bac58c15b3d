import Crypto
import Foundation

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
  /// The 32-byte Ed25519 seed, kept for ``privateKeyText``.
  private let seed: [UInt8]
  /// The key itself, derived once: deriving it from the seed costs as much as a signature.
  private let key: DerivedKey

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
    self.key = DerivedKey(key)
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
    Array(try key.key.signature(for: message))
  }
}

/// A signer's private key, derived from its seed once and shared by the signer's copies.
private final class DerivedKey: @unchecked Sendable {
  // Sound: `key` is a constant set in `init`, and signing only reads it (an Ed25519 signature is
  // computed from the key and the message alone), so copies on any thread may sign at once.
  let key: Curve25519.Signing.PrivateKey

  init(_ key: Curve25519.Signing.PrivateKey) { self.key = key }
}
