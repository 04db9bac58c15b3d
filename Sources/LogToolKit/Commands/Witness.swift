#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool witness --checkpoint FILE --key WITNESS.key --log-key VKEY --state DIR [--proof FILE | --log LOG]
  /// [--out FILE]`: cosigns a log's checkpoint as a witness (C2SP tlog-cosignature), only if it
  /// extends the newest checkpoint the witness cosigned for the same origin.
  public struct Witness: ParsableCommand {
    /// `witness`.
    public static let configuration = CommandConfiguration(
      abstract: "Cosign a log's checkpoint as a witness, only if it extends the last one cosigned for its origin.",
      discussion: """
        The witness keeps, in its state directory (--state DIR, one file per origin), the newest checkpoint it \
        cosigned for each log. It cosigns CHECKPOINT (signed by the log's key, --log-key VKEY) only if a \
        consistency proof from the checkpoint it holds to CHECKPOINT verifies: the proof comes from --proof FILE \
        (what `logtool consistency LOG OLD NEW --json` prints, OLD being the witness's size) or is computed from \
        a copy of the log (--log LOG). The first checkpoint of an origin needs no proof. It then replaces the held \
        checkpoint (written to a temporary file, synced, renamed) and prints the cosignature line, last; --out \
        writes the checkpoint with the cosignature added to a new FILE. It refuses (exit 1, naming the origin and \
        the sizes) a checkpoint older than or inconsistent with the one held, and leaves the state unchanged. \
        The key is a cosignature key (type 0x04, keygen --witness).
        """)

    /// The checkpoint to cosign.
    @Option(help: "The log's signed checkpoint to cosign.", completion: .file()) public var checkpoint: String
    /// The witness's private key.
    @Option(help: "The witness's private key file (type 0x04: keygen --witness).", completion: .file())
    public var key: String
    /// The log's verifier key.
    @Option(
      name: .customLong("log-key"), help: "The log's verifier key file: the checkpoint must be signed by it.",
      completion: .file())
    public var logKey: String
    /// The witness's state directory.
    @Option(
      help: "The witness's state directory: the newest checkpoint it cosigned per origin (created if missing).",
      completion: .directory)
    public var state: String
    /// The consistency proof, as `consistency --json` prints it.
    @Option(
      help: "The consistency proof from the witness's checkpoint to CHECKPOINT (consistency --json writes it).",
      completion: .file())
    public var proof: String?
    /// A copy of the log, to compute the consistency proof from.
    @Option(
      name: .customLong("log"), help: "Compute the consistency proof from this copy of the log instead.",
      completion: .directory)
    public var logDirectory: String?
    /// Where to write the cosigned checkpoint.
    @Option(help: "Also write the checkpoint with the cosignature added to this new file.", completion: .file())
    public var out: String?
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// `--proof` and `--log` exclude each other.
    public func validate() throws {
      if proof != nil, logDirectory != nil {
        throw ValidationError("give the consistency proof either as --proof FILE or as --log LOG, not both")
      }
    }

    /// Checks, cosigns, keeps the checkpoint and prints the cosignature.
    public func run() throws {
      // Every input is read and checked before the state is touched.
      let signer = try TreeFiles.signer(
        key, expected: [.cosignatureV1], hint: "a witness cosigns with a key keygen --witness made")
      let logVerifier = try TreeFiles.verifier(
        logKey, expected: [.ed25519], hint: "give the verifier key of the log that signed the checkpoint")
      let (note, signed) = try TreeFiles.checkpoint(checkpoint)
      let checkpointPath = TreeFiles.absolute(checkpoint)
      try TreeFiles.requireSignatureLine(in: note, by: logVerifier, file: checkpoint, keyFile: logKey)
      let others = note.signatures.filter { !($0.name == signer.name && $0.keyID == signer.keyID) }
      guard others.count < SignedNote.maxSignatures else {
        throw LogToolError.badInput(
          "\(checkpointPath) carries \(others.count) signatures already: a note has room for "
            + "\(SignedNote.maxSignatures)")
      }
      if let out, FileManager.default.fileExists(atPath: out) {
        throw LogToolError.badInput(
          "cannot create the cosigned checkpoint file \(TreeFiles.absolute(out)): it already exists")
      }
      let given = try proof.map { try ConsistencyProofFile.read($0) }
      if let given, given.origin != signed.origin {
        throw LogToolError.badInput(
          "the consistency proof \(given.path) is of '\(given.origin)', but the checkpoint \(checkpointPath) is of "
            + "'\(signed.origin)'")
      }
      if let given, given.newSize != signed.size {
        throw LogToolError.badInput(
          "the consistency proof \(given.path) goes from size \(given.oldSize) to \(given.newSize), but the "
            + "checkpoint \(checkpointPath) has size \(signed.size)")
      }

      let witness = try FileWitness(
        directory: URL(fileURLWithPath: state), signer: signer, logs: [signed.origin: logVerifier])
      let held = try witness.latest(origin: signed.origin).map { try Checkpoint(parsing: $0.text) }
      let heldSize = held?.size ?? 0
      let oldSize: UInt64
      let hashes: [[UInt8]]
      if let given {
        guard given.oldSize == heldSize else {
          throw LogToolError.badInput(
            "the consistency proof \(given.path) starts at size \(given.oldSize), but the witness holds "
              + (held == nil ? "no checkpoint" : "size \(heldSize)") + " of '\(signed.origin)': prove from "
              + "\(heldSize) (logtool consistency LOG \(heldSize) CHECKPOINT --json)")
        }
        (oldSize, hashes) = (given.oldSize, given.proof)
      } else if let logDirectory {
        (oldSize, hashes) = (heldSize, try proofFromLog(logDirectory, from: heldSize, to: signed))
      } else {
        if let held, held.size < signed.size {
          throw LogToolError.badInput(
            "the witness holds the checkpoint of size \(held.size) of '\(signed.origin)': give the consistency "
              + "proof from \(held.size) to \(signed.size) (--proof FILE, which logtool consistency LOG "
              + "\(held.size) CHECKPOINT --json writes) or a copy of the log (--log LOG)")
        }
        (oldSize, hashes) = (heldSize, [])
      }

      let cosignature: Cosignature
      do {
        cosignature = try witness.add(checkpoint: note, oldSize: oldSize, consistencyProof: hashes)
      } catch TreeError.witnessRefused(let origin, let reason) {
        throw LogToolError.logProblem(
          "the witness refuses the checkpoint \(checkpointPath) of '\(origin)' (size \(signed.size)): \(reason)")
      }
      var cosigned = note
      cosigned.signatures = others + [cosignature.noteSignature]
      if let out { try TreeFiles.create(out, cosigned.formatted, what: "cosigned checkpoint file") }

      let line = cosignature.noteSignature.line
      let time = ISOTime.string(micros: Int64(clamping: cosignature.timestamp) &* 1_000_000, fractionDigits: 0)
      var stdout = StandardOutput()
      defer { stdout.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("checkpointFile", checkpointPath)
        json.field("origin", signed.origin)
        json.field("treeSize", signed.size)
        json.field("rootHash", signed.rootHash.hex)
        json.key("heldSize")
        if held != nil { json.uint(heldSize) } else { json.null() }
        json.field("proofHashes", hashes.count)
        json.field("witness", signer.verifier.text)
        json.field("timestamp", cosignature.timestamp)
        json.field("state", TreeFiles.absolute(state))
        json.key("out")
        if let out { json.string(TreeFiles.absolute(out)) } else { json.null() }
        json.field("cosignature", String(line.dropLast()))
        json.field("note", cosigned.formattedText)
        json.endObject()
        stdout.line(json.text)
        return
      }
      var fields = FieldList()
      fields.add("checkpoint", "\(checkpointPath): \(signed.origin), \(signed.size) entries")
      fields.add("root", signed.rootHash.hex)
      fields.add("log key", "\(logVerifier.text): signature OK")
      if held == nil {
        fields.add("held", "none: the first checkpoint of this origin the witness cosigns")
      } else if heldSize == signed.size {
        fields.add("held", "\(heldSize): the same tree, cosigned again")
      } else {
        fields.add(
          "held", "\(heldSize): extended, the consistency proof (\(hashes.count) hashes) to \(signed.size) holds")
      }
      fields.add("witness", signer.verifier.text)
      fields.add("time", "\(time) (\(cosignature.timestamp))")
      fields.add("state", "\(TreeFiles.absolute(state)) (now holds \(signed.size) for this origin)")
      if let out { fields.add("written", TreeFiles.absolute(out)) }
      for field in fields.lines { stdout.line(field) }
      stdout.line()
      stdout.write(Array(line.utf8))
    }

    /// The consistency proof from `oldSize` to the checkpoint's size, from the log at `directory`
    /// (none when nothing is held, or for a size not above the held one: the witness refuses or
    /// compares the roots then).
    private func proofFromLog(_ directory: String, from oldSize: UInt64, to signed: Checkpoint) throws -> [[UInt8]] {
      let actionLog = try ActionLog(
        directory: URL(fileURLWithPath: directory), access: .readOnly, options: .init(returnsSealedEntries: true))
      defer { try? actionLog.close() }
      let origin = try actionLog.origin()
      guard origin == signed.origin else {
        throw LogToolError.badInput(
          "\(actionLog.path) is the log '\(origin)', but the checkpoint \(TreeFiles.absolute(checkpoint)) is of "
            + "'\(signed.origin)'")
      }
      guard oldSize > 0, oldSize < signed.size else { return [] }
      let treeSize = try actionLog.treeSize
      guard signed.size <= treeSize else {
        throw LogToolError.badInput(
          "\(actionLog.path) has a tree of \(treeSize) entries, fewer than the checkpoint's \(signed.size): give a "
            + "newer copy of the log")
      }
      return try actionLog.consistencyProof(from: oldSize, to: signed.size)
    }
  }
}

/// What `witness --proof` reads: the JSON `consistency --json` prints (`origin`, `old.treeSize`,
/// `new.treeSize`, `proof` as hex hashes; the other fields are not needed).
struct ConsistencyProofFile {
  var path: String
  var origin: String
  var oldSize: UInt64
  var newSize: UInt64
  var proof: [[UInt8]]

  /// Reads `path`; exit 2 naming the file and what is wrong.
  static func read(_ path: String) throws -> ConsistencyProofFile {
    let bytes = try TreeFiles.read(path, what: "consistency proof file")
    let file = TreeFiles.absolute(path)
    struct Side: Decodable { var treeSize: UInt64 }
    struct Fields: Decodable {
      var origin: String
      var old: Side
      var new: Side
      var proof: [String]
    }
    let fields: Fields
    do { fields = try JSONDecoder().decode(Fields.self, from: Data(bytes)) } catch {
      throw LogToolError.badInput(
        "\(file) is not a consistency proof (logtool consistency LOG OLD NEW --json writes one): it lacks "
          + "\"origin\", \"old\" and \"new\" tree sizes or the \"proof\" hashes")
    }
    var proof: [[UInt8]] = []
    for (index, text) in fields.proof.enumerated() {
      guard let hash = [UInt8](hex: text), hash.count == MerkleHash.size else {
        throw LogToolError.badInput(
          "\(file) is not a consistency proof: proof[\(index)] is not a hash of 64 hex digits")
      }
      proof.append(hash)
    }
    return ConsistencyProofFile(
      path: file, origin: fields.origin, oldSize: fields.old.treeSize, newSize: fields.new.treeSize, proof: proof)
  }
}
#endif  // LogTool
