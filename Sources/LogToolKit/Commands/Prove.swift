#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool prove LOG SEQ [--checkpoint FILE | --size N] [--out FILE]`: the inclusion proof of
  /// one entry in a tree of the log, as a proof document that `audit` checks without the log.
  public struct Prove: ParsableCommand {
    /// `prove`.
    public static let configuration = CommandConfiguration(
      abstract: "Prove that entry SEQ is in a checkpoint's tree: a proof document for `audit`.",
      discussion: """
        The tree is the checkpoint FILE's (whose root the log must still reproduce), or the first N \
        entries' (--size), or by default the newest checkpoint stored in the log that covers SEQ, else the \
        whole log. The proof document (one JSON object: the entry's stored bytes, the proof hashes and the \
        checkpoint) is printed with --json and written to a new FILE with --out.
        """)

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The entry.
    @Argument(help: "The entry's sequence number.") public var seq: UInt64
    /// The checkpoint whose tree the proof is in.
    @Option(help: "Prove inclusion in this signed checkpoint's tree.", completion: .file()) public var checkpoint:
      String?
    /// The tree size instead of a checkpoint.
    @Option(help: "Prove inclusion in the tree of the first N entries (no checkpoint).") public var size: UInt64?
    /// Where to write the proof document.
    @Option(help: "Write the proof document to this new file.", completion: .file()) public var out: String?
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// At most one of `--checkpoint` and `--size`.
    public func validate() throws {
      if checkpoint != nil, size != nil { throw ValidationError("--checkpoint and --size exclude each other") }
    }

    /// Builds, checks and prints the proof.
    public func run() throws {
      let given = try checkpoint.map { try TreeFiles.checkpoint($0) }
      if let out, FileManager.default.fileExists(atPath: out) {
        throw LogToolError.badInput("cannot create the proof file \(TreeFiles.absolute(out)): it already exists")
      }
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let treeSize = try actionLog.treeSize
      let origin = try actionLog.logID() == nil ? nil : try actionLog.origin()

      // The tree: the checkpoint's, N entries, or the newest stored checkpoint that covers SEQ, else the head.
      var note: SignedNote?
      var source: String
      let size: UInt64
      if let given {
        note = given.note
        size = given.checkpoint.size
        source = TreeFiles.absolute(checkpoint!)
      } else if let requested = self.size {
        size = requested
        source = "the first \(requested) entries (--size)"
      } else if let stored = try actionLog.checkpoints().last(where: {
        (try? Checkpoint(parsing: $0.text))?.size ?? 0 >= seq
      }) {
        note = stored
        size = try Checkpoint(parsing: stored.text).size
        source = "the newest checkpoint stored in the log that covers \(seq)"
      } else {
        size = treeSize
        source = "the whole log (no stored checkpoint covers \(seq))"
      }
      guard size <= treeSize else {
        throw LogToolError.badInput(
          "\(actionLog.path) has a tree of \(treeSize) entries; it cannot prove anything in a tree of \(size)"
            + (given != nil ? " (the checkpoint \(source))" : ""))
      }
      guard seq >= 1, seq <= size else {
        throw LogToolError.badInput(
          "entry \(seq) is not in the tree of \(size) entries of \(actionLog.path) (\(source)): it holds entries 1…\(size)"
        )
      }
      guard let value = try actionLog.storedValue(seq: seq) else {
        let anchor = try actionLog.meta().anchor.seq
        throw LogToolError.badInput(
          "\(actionLog.path) has no entry \(seq)"
            + (seq <= anchor ? ": compaction removed it (the log starts after \(anchor)); its archive holds it" : ""))
      }
      let root = try actionLog.treeRoot(size: size)
      if let note, let parsed = try? Checkpoint(parsing: note.text) {
        if let origin, parsed.origin != origin {
          throw LogToolError.logProblem(
            "\(source) is of '\(parsed.origin)', but \(actionLog.path) is '\(origin)': another log, or relabelled meta")
        }
        guard parsed.rootHash == root else {
          throw LogToolError.logProblem(
            "\(actionLog.path) no longer reproduces the root of \(source) (size \(size)): "
              + "run verify --checkpoint to see what changed")
        }
      }
      let proof = try actionLog.inclusionProof(seq: seq, treeSize: size)
      let leaf = MerkleHash.leaf(seq: seq, value: value)
      try MerkleTree.verifyInclusion(leafHash: leaf, index: seq - 1, size: size, proof: proof, root: root)
      let document = ProofDocument(
        origin: origin, seq: seq, leafIndex: seq - 1, treeSize: size, value: value, leafHash: leaf, rootHash: root,
        proof: proof, checkpoint: note?.formattedText)
      if let out { try TreeFiles.create(out, Array((document.json + "\n").utf8), what: "proof file") }

      var stdout = StandardOutput()
      defer { stdout.flush() }
      if output.json {
        stdout.line(document.json)
        return
      }
      var fields = FieldList()
      fields.add("log", actionLog.path)
      fields.add("entry", "\(seq) (leaf index \(seq - 1), \(value.count) bytes stored)")
      fields.add("tree", "\(size) entries: \(source)")
      fields.add("root", root.hex)
      fields.add("leaf hash", leaf.hex)
      fields.add("proof", "\(proof.count) hash\(proof.count == 1 ? "" : "es"), leaf to root")
      for hash in proof { fields.add("", hash.hex) }
      fields.add("check", "OK: the entry and the proof lead to the root")
      if let out { fields.add("written", TreeFiles.absolute(out)) }
      for line in fields.lines { stdout.line(line) }
    }
  }
}
#endif  // LogTool
