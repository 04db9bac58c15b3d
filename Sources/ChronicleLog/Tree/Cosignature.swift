import Foundation

/// A C2SP tlog-cosignature v1: a witness's Ed25519 statement that, at `timestamp`, the checkpoint
/// is the largest consistent tree it has seen for the origin.
///
/// The signed message is `cosignature/v1\ntime <timestamp>\n` followed by the checkpoint body; the
/// note signature line carries `keyID ‖ u64be(timestamp) ‖ signature`, under a key of type
/// ``NoteKeyType/cosignatureV1``:
///
/// ```swift
/// let witnessKey = try NoteSigner.generate(name: "witness.example/w1", type: .cosignatureV1)
/// let cosignature = try Cosignature.sign(checkpointText: checkpoint.text, timestamp: 1_700_000_000, with: witnessKey)
/// try cosignature.verify(checkpointText: checkpoint.text, by: witnessKey.verifier)
/// note.signatures.append(cosignature.noteSignature)
/// ```
public struct Cosignature: Sendable, Hashable {
  /// The witness's key name.
  public var name: String
  /// The witness key's 4-byte ID.
  public var keyID: [UInt8]
  /// When it was signed, seconds since 1970 (at most 2^63 − 1).
  public var timestamp: UInt64
  /// The 64-byte Ed25519 signature.
  public var signature: [UInt8]

  /// The bytes a cosignature signs.
  public static func message(checkpointText: String, timestamp: UInt64) -> [UInt8] {
    Array("cosignature/v1\ntime \(timestamp)\n\(checkpointText)".utf8)
  }

  /// Signs `checkpointText` at `timestamp` with a key of type ``NoteKeyType/cosignatureV1``.
  ///
  /// - Throws: ``TreeError/malformedKey(_:)`` for a key of another type or a timestamp above 2^63 − 1.
  public static func sign(checkpointText: String, timestamp: UInt64, with signer: NoteSigner) throws -> Cosignature {
    guard signer.verifier.type == .cosignatureV1 else {
      throw TreeError.malformedKey("'\(signer.name)' is not a cosignature key (type 0x04)")
    }
    guard timestamp <= UInt64(Int64.max) else { throw TreeError.malformedKey("timestamp \(timestamp) is above 2^63 − 1") }
    return Cosignature(
      name: signer.name, keyID: signer.keyID, timestamp: timestamp,
      signature: try signer.sign(message(checkpointText: checkpointText, timestamp: timestamp)))
  }

  /// Creates a cosignature from its parts.
  public init(name: String, keyID: [UInt8], timestamp: UInt64, signature: [UInt8]) {
    self.name = name
    self.keyID = keyID
    self.timestamp = timestamp
    self.signature = signature
  }

  /// Reads a cosignature from a note's signature line.
  ///
  /// - Throws: ``TreeError/malformedNote(_:)`` when the line is not 8 + 64 bytes after the key ID.
  public init(_ line: SignedNote.Signature) throws {
    guard line.signature.count == 72 else {
      throw TreeError.malformedNote("the cosignature by '\(line.name)' has \(line.signature.count) bytes, not 72")
    }
    let time = line.signature.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    self.init(name: line.name, keyID: line.keyID, timestamp: time, signature: Array(line.signature.dropFirst(8)))
  }

  /// The note signature line: `keyID ‖ u64be(timestamp) ‖ signature`.
  public var noteSignature: SignedNote.Signature {
    var bytes: [UInt8] = []
    for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: timestamp >> UInt64(shift))) }
    return SignedNote.Signature(name: name, keyID: keyID, signature: bytes + signature)
  }

  /// Checks the cosignature over `checkpointText` against a witness key.
  ///
  /// - Throws: ``TreeError/badSignature(_:)`` naming the witness.
  public func verify(checkpointText: String, by verifier: NoteVerifier) throws {
    guard verifier.type == .cosignatureV1, verifier.name == name, verifier.keyID == keyID else {
      throw TreeError.badSignature("the cosignature is by '\(name)' (key \(keyID.hex)), not by cosigner '\(verifier.name)'")
    }
    guard timestamp <= UInt64(Int64.max),
      verifier.isValidSignature(signature, of: Self.message(checkpointText: checkpointText, timestamp: timestamp))
    else {
      throw TreeError.badSignature("the cosignature by '\(name)' does not verify")
    }
  }
}
