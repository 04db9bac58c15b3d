#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool consistency LOG OLD NEW [--key VKEY]`: the consistency proof between two trees of the
  /// log (checkpoint files or tree sizes), checked.
  public struct Consistency: ParsableCommand {
    /// `consistency`.
    public static let configuration = CommandConfiguration(
      abstract: "Prove and check that the tree of OLD is a prefix of the tree of NEW (checkpoint files or sizes).",
      discussion: """
        OLD and NEW are each a signed checkpoint file or a tree size. The proof comes from the log's stored \
        tree and is checked against the checkpoints' roots (for a size, the log's own root of that size): \
        it holds only if the log kept, unchanged, every entry the older checkpoint committed to. With \
        --key the checkpoints' signatures are checked too. Exit 1 if the proof does not hold.
        """)

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The older tree.
    @Argument(help: "The older tree: a checkpoint file or a tree size.") public var old: String
    /// The newer tree.
    @Argument(help: "The newer tree: a checkpoint file or a tree size.") public var new: String
    /// The verifier key for the checkpoints' signatures.
    @Option(help: "Check the checkpoints' signatures with this verifier key file.", completion: .file())
    public var key: String?
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// One side: a size, or a checkpoint file.
    private struct Side {
      var argument: String
      var file: String?
      var note: SignedNote?
      var size: UInt64
      var root: [UInt8] = []
      var label: String { file.map { "\($0) (size \(size))" } ?? "size \(size)" }
    }

    private func side(_ argument: String, verifier: NoteVerifier?) throws -> Side {
      if let size = UInt64(argument) { return Side(argument: argument, size: size) }
      if argument.utf8.allSatisfy({ (0x30...0x39).contains($0) }), !argument.isEmpty {
        throw LogToolError.badInput("\(argument) is not a tree size (at most \(UInt64.max))")
      }
      let (note, checkpoint) = try TreeFiles.checkpoint(argument)
      if let verifier, let key {
        try TreeFiles.requireSignatureLine(in: note, by: verifier, file: argument, keyFile: key)
      }
      return Side(
        argument: argument, file: TreeFiles.absolute(argument), note: note, size: checkpoint.size,
        root: checkpoint.rootHash)
    }

    /// Proves, checks and prints.
    public func run() throws {
      let verifier = try key.map { try TreeFiles.verifier($0) }
      var older = try side(old, verifier: verifier)
      var newer = try side(new, verifier: verifier)
      guard older.size <= newer.size else {
        throw LogToolError.badInput(
          "OLD (\(older.label)) is larger than NEW (\(newer.label)): a consistency proof goes from an older, "
            + "smaller tree to a newer one")
      }
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let treeSize = try actionLog.treeSize
      guard newer.size <= treeSize else {
        throw LogToolError.badInput(
          "\(actionLog.path) has a tree of \(treeSize) entries, not \(newer.size) (NEW: \(newer.label))")
      }
      let origin = try actionLog.origin()
      let anchor = try actionLog.meta().anchor.seq
      /// Runs `body`; a tree hash missing left of a compaction's anchor is named as such.
      func beforeAnchor<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as TreeError where older.size < anchor {
          throw LogToolError.badInput(
            "\(actionLog.path) was compacted through entry \(anchor): the tree hashes a proof from size "
              + "\(older.size) needs were removed with those entries, and only the tree of \(anchor) entries and "
              + "larger ones can be proven (\(error))")
        }
      }
      var problems: [(name: String, message: String)] = []
      for index in 0..<2 {
        var side = index == 0 ? older : newer
        if side.note == nil {
          side.root = try beforeAnchor { try actionLog.treeRoot(size: side.size) }
        } else if let note = side.note, let file = side.file {
          let checkpoint = try Checkpoint(parsing: note.text)
          if checkpoint.origin != origin {
            problems.append(
              ("originMismatch", "\(file) is a checkpoint of '\(checkpoint.origin)', but the log is '\(origin)'"))
          }
          if let verifier {
            do { try note.verify(by: verifier) } catch {
              problems.append(("badSignature", "\(file): \(error)"))
            }
          }
        }
        if index == 0 { older = side } else { newer = side }
      }
      let proof = try beforeAnchor { try actionLog.consistencyProof(from: older.size, to: newer.size) }
      do {
        try MerkleTree.verifyConsistency(
          oldSize: older.size, newSize: newer.size, oldRoot: older.root, newRoot: newer.root, proof: proof)
      } catch {
        problems.append(("proofFailed", "\(error)"))
      }

      var stdout = StandardOutput()
      defer { stdout.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", actionLog.path)
        json.field("origin", origin)
        for (name, side) in [("old", older), ("new", newer)] {
          json.key(name)
          json.beginObject()
          json.key("file")
          if let file = side.file { json.string(file) } else { json.null() }
          json.field("treeSize", side.size)
          json.field("rootHash", side.root.hex)
          json.endObject()
        }
        json.key("proof")
        json.beginArray()
        for hash in proof { json.string(hash.hex) }
        json.endArray()
        json.field("signaturesChecked", verifier != nil && (older.note != nil || newer.note != nil))
        json.field("valid", problems.isEmpty)
        json.problems(problems)
        json.endObject()
        stdout.line(json.text)
      } else {
        var fields = FieldList()
        fields.add("log", actionLog.path)
        fields.add("origin", origin)
        fields.add("old", "\(older.label), root \(older.root.hex)")
        fields.add("new", "\(newer.label), root \(newer.root.hex)")
        fields.add("proof", "\(proof.count) hash\(proof.count == 1 ? "" : "es")")
        for hash in proof { fields.add("", hash.hex) }
        if older.note != nil || newer.note != nil {
          fields.add(
            "signatures",
            verifier.map { "checked with \($0.text)" } ?? "not checked (no --key): the roots are taken on trust")
        }
        if problems.isEmpty {
          fields.add("result", "OK: the tree of \(older.size) entries is a prefix of the tree of \(newer.size)")
        } else {
          fields.add("result", "FAILED: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
          for problem in problems { fields.add("", "\(problem.name): \(problem.message)") }
        }
        for line in fields.lines { stdout.line(line) }
      }
      if let first = problems.first {
        stdout.flush()
        throw LogToolError.logProblem(
          "\(actionLog.path): \(older.label) → \(newer.label) does not hold: \(first.name): \(first.message)")
      }
    }
  }
}
#endif  // LogTool
