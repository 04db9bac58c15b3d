#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool audit ENTRY-FILE [--proof FILE] --checkpoint FILE --key VKEY`: verifies one entry
  /// without the log, and prints what it says.
  public struct Audit: ParsableCommand {
    /// `audit`.
    public static let configuration = CommandConfiguration(
      abstract: "Verify one entry without the log: its inclusion proof, against a signed checkpoint.",
      discussion: """
        ENTRY-FILE is a proof document (prove --out writes one): the entry's sequence number and stored \
        bytes. The proof is read from --proof FILE, by default from ENTRY-FILE itself. audit recomputes the \
        entry's leaf hash from its bytes, follows the proof to a root, and checks that root and the tree \
        size against the checkpoint, whose signature it checks with the verifier key. Exit 1 naming what \
        does not hold (the entry, the proof, the checkpoint); exit 2 for a key that did not sign the checkpoint.
        """)

    /// The entry.
    @Argument(help: "The entry: a proof document written by prove --out.", completion: .file())
    public var entryFile: String
    /// The proof.
    @Option(help: "The proof document (default: ENTRY-FILE).", completion: .file()) public var proof: String?
    /// The signed checkpoint.
    @Option(help: "The signed checkpoint, as received from the log's owner.", completion: .file())
    public var checkpoint: String
    /// The verifier key.
    @Option(help: "The log's verifier key file.", completion: .file()) public var key: String
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Checks and prints.
    public func run() throws {
      let verifier = try TreeFiles.verifier(key)
      let (note, signed) = try TreeFiles.checkpoint(checkpoint)
      try TreeFiles.requireSignatureLine(in: note, by: verifier, file: checkpoint, keyFile: key)
      let entryDocument = try ProofDocument.read(entryFile, what: "entry file")
      let proofFile = proof ?? entryFile
      let proofDocument = proof == nil ? entryDocument : try ProofDocument.read(proofFile, what: "proof file")
      let seq = entryDocument.seq
      let entryPath = TreeFiles.absolute(entryFile)
      let proofPath = TreeFiles.absolute(proofFile)
      let checkpointPath = TreeFiles.absolute(checkpoint)

      var problems: [(name: String, message: String)] = []
      do { try note.verify(by: verifier) } catch {
        problems.append(("badSignature", "the checkpoint \(checkpointPath) was changed or forged: \(error)"))
      }
      let leaf = MerkleHash.leaf(seq: seq, value: entryDocument.value)
      if proofDocument.seq != seq || proofDocument.leafIndex != seq - 1 {
        problems.append(
          (
            "wrongEntry",
            "the proof \(proofPath) is for entry \(proofDocument.seq) (leaf \(proofDocument.leafIndex)), "
              + "not entry \(seq) of \(entryPath)"
          ))
      }
      if proofDocument.treeSize != signed.size {
        problems.append(
          (
            "wrongTree",
            "the proof \(proofPath) is for a tree of \(proofDocument.treeSize) entries, but the checkpoint covers "
              + "\(signed.size): prove the entry against this checkpoint (prove --checkpoint)"
          ))
      }
      // Against a root nobody signed, a proof proves nothing: a bad signature is the whole verdict.
      if problems.isEmpty {
        let reached = try? MerkleTree.rootFromInclusion(
          leafHash: leaf, index: seq - 1, size: signed.size, proof: proofDocument.proof)
        if reached != signed.rootHash {
          let proofHolds =
            (try? MerkleTree.rootFromInclusion(
              leafHash: proofDocument.leafHash, index: seq - 1, size: signed.size, proof: proofDocument.proof))
            == signed.rootHash
          if proofHolds, proofDocument.leafHash != leaf {
            problems.append(
              (
                "entryChanged",
                "entry \(seq) in \(entryPath) was changed: its leaf hash \(leaf.hex) is not the one the checkpoint "
                  + "commits to (\(proofDocument.leafHash.hex))"
              ))
          } else {
            problems.append(
              (
                "proofInvalid",
                "the proof \(proofPath) does not lead from entry \(seq) to the root of the checkpoint "
                  + "\(signed.rootHash.hex): the proof or the entry was changed, or they are of another log"
              ))
          }
        }
      }
      let entry: StoredEntry?
      var entryError: String?
      do { entry = try StoredEntry(seq: seq, storedValue: entryDocument.value) } catch {
        entry = nil
        entryError = "\(error)"
      }

      var stdout = StandardOutput()
      defer { stdout.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("entryFile", entryPath)
        json.field("proofFile", proofPath)
        json.field("checkpointFile", checkpointPath)
        json.field("origin", signed.origin)
        json.field("treeSize", signed.size)
        json.field("rootHash", signed.rootHash.hex)
        json.field("key", verifier.text)
        json.field("seq", seq)
        json.field("leafHash", leaf.hex)
        json.field("valid", problems.isEmpty)
        json.problems(problems)
        json.key("entry")
        if let entry { entry.writeJSON(into: &json) } else { json.null() }
        if let entryError { json.field("entryError", entryError) }
        json.endObject()
        stdout.line(json.text)
      } else {
        var fields = FieldList()
        fields.add("entry file", entryPath)
        if proof != nil { fields.add("proof file", proofPath) }
        fields.add("checkpoint", "\(checkpointPath): \(signed.origin), \(signed.size) entries")
        fields.add("root", signed.rootHash.hex)
        fields.add("key", verifier.text)
        fields.add("signature", problems.contains { $0.name == "badSignature" } ? "FAILED" : "OK")
        fields.add("leaf hash", "\(leaf.hex) (recomputed from the entry's bytes)")
        fields.add(
          "inclusion",
          problems.contains { $0.name != "badSignature" }
            ? "FAILED" : "OK: leaf \(seq - 1) with \(proofDocument.proof.count) proof hashes leads to the root")
        if problems.isEmpty {
          fields.add("result", "OK: entry \(seq) is in the log the checkpoint signs")
        } else {
          fields.add("result", "FAILED: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
          for problem in problems { fields.add("", "\(problem.name): \(problem.message)") }
        }
        for line in fields.lines { stdout.line(line) }
        stdout.line()
        if !problems.isEmpty { stdout.line("what the entry file says (NOT verified: do not rely on it)") }
        if let entry {
          var shown = FieldList()
          shown.add("seq", String(entry.seq))
          shown.add("time", "\(Format.time(entry.timestamp)) (\(entry.timestamp) µs)")
          shown.add("kind", entry.kind.description)
          let flags = Format.flagNames(entry.flags)
          shown.add("flags", flags.isEmpty ? "-" : flags.joined(separator: ", "))
          shown.add("type", entry.typeName)
          shown.add("codec", entry.codec.description)
          shown.add("schema", String(entry.schemaVersion))
          let metadata = entry.metadata.sorted { $0.key < $1.key }
          if metadata.isEmpty { shown.add("metadata", "-") }
          for (index, pair) in metadata.enumerated() { shown.add(index == 0 ? "metadata" : "", Format.pair(pair)) }
          shown.add("hash", entry.hash.hex)
          for line in shown.lines { stdout.line(line) }
          do {
            let payload = Format.indented(json: try PayloadText.compactJSON(entry.payload, codec: entry.codec))
            stdout.line("payload")
            stdout.line(payload)
          } catch {
            stdout.line("payload   (does not decode as \(entry.codec): \(error))")
          }
        } else if let entryError {
          stdout.line("entry     cannot be read: \(entryError)")
        }
      }
      if let first = problems.first {
        stdout.flush()
        throw LogToolError.logProblem("entry \(seq) of \(entryPath) does not verify: \(first.name): \(first.message)")
      }
    }
  }
}
#endif  // LogTool
