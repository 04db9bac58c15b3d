#if LogTool
import ChronicleLog
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The files the tree commands read and write: keys, signed checkpoints, proof documents. Every
/// error is a one-line ``LogToolError`` naming the file.
enum TreeFiles {
  // MARK: - Reading

  /// The bytes of `path`, or exit 2 naming it.
  static func read(_ path: String, what: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: path)
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
      throw LogToolError.badInput("no \(what) at \(absolute(path)): the file does not exist")
    }
    guard !isDirectory.boolValue else { throw LogToolError.badInput("\(absolute(path)) is a directory, not a \(what)") }
    do {
      let data = try Data(contentsOf: url)
      guard data.count <= 1 << 20 else {
        throw LogToolError.badInput("\(absolute(path)) is not a \(what): \(data.count) bytes is far too large")
      }
      return Array(data)
    } catch let error as LogToolError {
      throw error
    } catch {
      throw LogToolError.badInput("cannot read the \(what) \(absolute(path)): \(error.localizedDescription)")
    }
  }

  /// The text of a one-line key file, without surrounding white space.
  private static func keyText(_ path: String, what: String) throws -> String {
    guard let text = String(validating: try read(path, what: what), as: UTF8.self) else {
      throw LogToolError.badInput("\(absolute(path)) is not a \(what): it is not UTF-8 text")
    }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// A signer key file (`PRIVATE+KEY+…`), as `keygen` writes it, of one of the `expected` types.
  static func signer(_ path: String, expected: [NoteKeyType] = [.ed25519, .cosignatureV1], hint: String? = nil) throws
    -> NoteSigner
  {
    let text = try keyText(path, what: "private key file")
    if !text.hasPrefix("PRIVATE+KEY+"), (try? NoteVerifier(parsing: text)) != nil {
      throw LogToolError.badInput(
        "\(absolute(path)) is a verifier key, not a private key: sign with the PRIVATE+KEY file keygen wrote")
    }
    try requireType(of: text, parts: 5, path: path, expected: expected, hint: hint)
    do { return try NoteSigner(parsing: text) } catch {
      throw LogToolError.badInput("\(absolute(path)) is not a private key file: \(error)")
    }
  }

  /// A verifier key file (`name+id+key`), as `keygen` writes it, of one of the `expected` types.
  static func verifier(
    _ path: String, expected: [NoteKeyType] = [.ed25519, .cosignatureV1], hint: String? = nil
  ) throws -> NoteVerifier {
    let text = try keyText(path, what: "verifier key file")
    if text.hasPrefix("PRIVATE+KEY+") {
      throw LogToolError.badInput(
        "\(absolute(path)) is a private key, not a verifier key: give the .vkey file keygen wrote (and keep the private one secret)"
      )
    }
    try requireType(of: text, parts: 3, path: path, expected: expected, hint: hint)
    do { return try NoteVerifier(parsing: text) } catch {
      throw LogToolError.badInput("\(absolute(path)) is not a verifier key file: \(error)")
    }
  }

  /// What a key of `type` is, as errors name it.
  static func describe(_ type: NoteKeyType) -> String {
    switch type {
    case .ed25519: "an Ed25519 checkpoint key (type 0x01)"
    case .cosignatureV1: "a witness's cosignature key (type 0x04)"
    }
  }

  /// Exit 2 naming the file, the type found and the types expected (and `hint`, what to do), when
  /// the type byte of the key text (of `parts` parts separated by `+`, the last one base64, which
  /// may hold `+` itself) is not one of `expected`. A text whose type cannot be read is left to the
  /// key parser, which says what is wrong with it.
  private static func requireType(
    of text: String, parts: Int, path: String, expected: [NoteKeyType], hint: String?
  ) throws {
    let split = text.split(separator: "+", maxSplits: parts - 1, omittingEmptySubsequences: false)
    guard split.count == parts, let last = split.last,
      let data = Data(base64Encoded: String(last)), data.count == 33, let byte = data.first
    else { return }
    let wanted = expected.map(describe).joined(separator: " or ")
    guard let type = NoteKeyType(rawValue: byte) else {
      throw LogToolError.badInput(
        "\(absolute(path)) holds a key of type 0x\(String(format: "%02x", byte)), which logtool does not know: "
          + "give \(wanted)")
    }
    guard expected.contains(type) else {
      throw LogToolError.badInput(
        "\(absolute(path)) is \(describe(type)), but \(wanted) is expected here\(hint.map { ": " + $0 } ?? "")")
    }
  }

  /// A signed checkpoint file: a C2SP signed note whose text is a tlog-checkpoint body.
  static func checkpoint(_ path: String) throws -> (note: SignedNote, checkpoint: Checkpoint) {
    let bytes = try read(path, what: "checkpoint file")
    do {
      let note = try SignedNote(parsing: bytes)
      return (note, try Checkpoint(parsing: note.text))
    } catch {
      throw LogToolError.badInput("\(absolute(path)) is not a signed checkpoint: \(error)")
    }
  }

  /// Exit 2 when `note` carries no signature line of `verifier`'s name and key ID: the key given
  /// is not the one that signed it (a line that is there but does not verify is a problem the
  /// checks report, exit 1).
  static func requireSignatureLine(in note: SignedNote, by verifier: NoteVerifier, file: String, keyFile: String) throws
  {
    guard note.signatures.contains(where: { $0.name == verifier.name && $0.keyID == verifier.keyID }) else {
      let signers = note.signatures.map { "'\($0.name)' (\($0.keyID.hex))" }.joined(separator: ", ")
      throw LogToolError.badInput(
        "\(absolute(file)) carries no signature by the key of \(absolute(keyFile)), '\(verifier.name)' "
          + "(\(verifier.keyID.hex)); it is signed by \(signers.isEmpty ? "nobody" : signers): wrong key?")
    }
  }

  // MARK: - Writing

  /// Writes `bytes` to a new file at `path` with `mode`: created exclusively (an existing file or
  /// link is never replaced) and synced. A failed write removes what it created.
  static func create(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644, what: String) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
    guard descriptor >= 0 else {
      let reason = errno == EEXIST ? "it already exists (it is never replaced)" : String(cString: strerror(errno))
      throw LogToolError.badInput("cannot create the \(what) \(absolute(path)): \(reason)")
    }
    var failure: String?
    var offset = 0
    while offset < bytes.count, failure == nil {
      let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno != EINTR { failure = String(cString: strerror(errno)) }
      } else {
        offset += written
      }
    }
    if failure == nil, fchmod(descriptor, mode) != 0 || fsync(descriptor) != 0 {
      failure = String(cString: strerror(errno))
    }
    close(descriptor)
    if let failure {
      unlink(path)
      throw LogToolError.badInput("cannot write the \(what) \(absolute(path)): \(failure)")
    }
  }

  /// `path` made absolute and standardized, as errors name files.
  static func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
}

// MARK: - Naming checkpoint problems

extension JSONWriter {
  /// The `problems` field of the tree commands' JSON: one `{"name", "message"}` object per problem.
  mutating func problems(_ problems: [(name: String, message: String)]) {
    key("problems")
    beginArray()
    for problem in problems {
      beginObject()
      field("name", problem.name)
      field("message", problem.message)
      endObject()
    }
    endArray()
  }
}

extension CheckpointVerification.Problem {
  /// The case's name, as `verify --checkpoint` prints it before the sentence.
  var name: String {
    switch self {
    case .badSignature: "badSignature"
    case .originMismatch: "originMismatch"
    case .entriesRemovedFromEnd: "entriesRemovedFromEnd"
    case .oldestRemovedWithoutTree: "oldestRemovedWithoutTree"
    case .anchorForged: "anchorForged"
    case .chainBroken: "chainBroken"
    case .chainRewritten: "chainRewritten"
    }
  }
}

extension SignedNote {
  /// The note's bytes as text (a signed note is UTF-8).
  var formattedText: String { String(decoding: formatted, as: UTF8.self) }
}
#endif  // LogTool
