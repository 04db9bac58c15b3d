import Foundation

/// A C2SP signed note: a text, a blank line, and signature lines `— name base64(keyID ‖ signature)`.
///
/// Chronicle's checkpoints are signed notes whose text is a ``Checkpoint`` body:
///
/// ```swift
/// var note = SignedNote(text: checkpoint.text)
/// try note.sign(with: signer)
/// let bytes = note.formatted                         // what is stored and shipped
/// let checked = try SignedNote(parsing: bytes)
/// try checked.verify(by: signer.verifier)            // unknown signers are ignored
/// ```
public struct SignedNote: Sendable, Hashable {
  /// One signature line.
  public struct Signature: Sendable, Hashable {
    /// The signer's key name.
    public var name: String
    /// The 4-byte key ID.
    public var keyID: [UInt8]
    /// The signature bytes after the key ID (64 for Ed25519, 72 for a cosignature).
    public var signature: [UInt8]

    /// Creates a signature line's contents.
    public init(name: String, keyID: [UInt8], signature: [UInt8]) {
      self.name = name
      self.keyID = keyID
      self.signature = signature
    }

    /// `— name base64(keyID ‖ signature)\n`.
    public var line: String { "\u{2014} \(name) \(Data(keyID + signature).base64EncodedString())\n" }
  }

  /// The most signature lines a note may carry.
  public static let maxSignatures = 100

  /// The signed text, ending with a newline.
  public var text: String
  /// The signatures, in order.
  public var signatures: [Signature]

  /// A note with `text` (which must end with a newline to be signed) and `signatures`.
  public init(text: String, signatures: [Signature] = []) {
    self.text = text
    self.signatures = signatures
  }

  /// Parses a signed note: text (valid UTF-8, ending in a newline, no control characters but
  /// newlines), one blank line, then 1 to 100 signature lines.
  ///
  /// - Throws: ``TreeError/malformedNote(_:)`` saying what is wrong.
  public init(parsing bytes: [UInt8]) throws {
    guard let whole = String(validating: bytes, as: UTF8.self) else {
      throw TreeError.malformedNote("the note is not valid UTF-8")
    }
    guard whole.hasSuffix("\n") else { throw TreeError.malformedNote("the note does not end with a newline") }
    guard let split = whole.range(of: "\n\n", options: .backwards) else {
      throw TreeError.malformedNote("no blank line separates the text from the signatures")
    }
    let text = String(whole[..<split.lowerBound]) + "\n"
    if let bad = text.unicodeScalars.first(where: { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }) {
      throw TreeError.malformedNote("the text holds the control character U+\(String(bad.value, radix: 16))")
    }
    let block = whole[split.upperBound...].dropLast()
    let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
    guard !lines.isEmpty, !(lines.count == 1 && lines[0].isEmpty) else {
      throw TreeError.malformedNote("the note has no signature lines")
    }
    guard lines.count <= Self.maxSignatures else {
      throw TreeError.malformedNote("\(lines.count) signature lines, more than \(Self.maxSignatures)")
    }
    var signatures: [Signature] = []
    for (offset, line) in lines.enumerated() {
      guard line.hasPrefix("\u{2014} ") else {
        throw TreeError.malformedNote("signature line \(offset + 1) does not start with '— '")
      }
      let fields = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
      guard fields.count == 2, !fields[0].isEmpty, !fields[0].contains("+") else {
        throw TreeError.malformedNote("signature line \(offset + 1) is not '— name signature'")
      }
      guard let data = Data(base64Encoded: String(fields[1])), data.count > 4 else {
        throw TreeError.malformedNote("signature line \(offset + 1) of '\(fields[0])' is not base64 of a key ID and a signature")
      }
      signatures.append(Signature(name: String(fields[0]), keyID: Array(data.prefix(4)), signature: Array(data.dropFirst(4))))
    }
    self.init(text: text, signatures: signatures)
  }

  /// The note's bytes: the text, a blank line, the signature lines.
  public var formatted: [UInt8] {
    Array((text + "\n" + signatures.map(\.line).joined()).utf8)
  }

  /// Adds a signature of ``text`` by `signer`: for a cosignature key (type
  /// ``NoteKeyType/cosignatureV1``) a ``Cosignature`` of the text as a checkpoint, timestamped now.
  ///
  /// - Throws: ``TreeError/malformedNote(_:)`` when the text does not end with a newline or has
  ///   control characters, or 100 signatures are there already.
  public mutating func sign(with signer: NoteSigner) throws {
    guard text.hasSuffix("\n") else { throw TreeError.malformedNote("the text does not end with a newline") }
    guard !text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }) else {
      throw TreeError.malformedNote("the text holds a control character")
    }
    guard signatures.count < Self.maxSignatures else {
      throw TreeError.malformedNote("the note has \(Self.maxSignatures) signatures already")
    }
    if signer.verifier.type == .cosignatureV1 {
      let now = UInt64(max(0, Date().timeIntervalSince1970))
      signatures.append(try Cosignature.sign(checkpointText: text, timestamp: now, with: signer).noteSignature)
      return
    }
    signatures.append(Signature(name: signer.name, keyID: signer.keyID, signature: try signer.sign(Array(text.utf8))))
  }

  /// Checks that `verifier` signed the text. Lines by other keys are ignored. A cosignature key's
  /// lines (type ``NoteKeyType/cosignatureV1``) are checked as ``Cosignature``s of the text.
  ///
  /// - Throws: ``TreeError/badSignature(_:)`` when no line carries the verifier's name and key ID,
  ///   or one does and its signature does not verify.
  public func verify(by verifier: NoteVerifier) throws {
    let mine = signatures.filter { $0.name == verifier.name && $0.keyID == verifier.keyID }
    guard !mine.isEmpty else {
      throw TreeError.badSignature("the note carries no signature by '\(verifier.name)' (key \(verifier.keyID.hex))")
    }
    if verifier.type == .cosignatureV1 {
      for line in mine {
        do { try Cosignature(line).verify(checkpointText: text, by: verifier) } catch {
          throw TreeError.badSignature(
            "the cosignature by '\(verifier.name)' (key \(verifier.keyID.hex)) does not verify")
        }
      }
      return
    }
    let message = Array(text.utf8)
    for signature in mine where !verifier.isValidSignature(signature.signature, of: message) {
      throw TreeError.badSignature("the signature by '\(verifier.name)' (key \(verifier.keyID.hex)) does not verify")
    }
  }

  /// The verifiers among `verifiers` that validly signed the text; lines by unknown keys are ignored.
  public func verifiedSigners(among verifiers: [NoteVerifier]) -> [NoteVerifier] {
    verifiers.filter { (try? verify(by: $0)) != nil }
  }
}
