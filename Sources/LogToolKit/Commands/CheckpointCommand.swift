#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool checkpoint LOG --key FILE [--out FILE]`: signs the head as a checkpoint, stores it in
  /// the log and prints the signed note.
  public struct CheckpointCommand: ParsableCommand {
    /// `checkpoint`.
    public static let configuration = CommandConfiguration(
      commandName: "checkpoint",
      abstract: "Sign a checkpoint of the whole log (tree size and root) with a private key; keep it in the log.",
      discussion: """
        Needs the writer lock, as every write does: while an app has the log open for writing it refuses \
        (exit 2, locked); sign from the app then (store.checkpoint()), or stop it first. The signed note is \
        stored in the log (only the note: never the key), printed, and with --out written to a new FILE \
        (never replacing one). Send it, with the verifier key, to whoever will check the log.
        """)

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The private key file.
    @Option(help: "The private key file (PRIVATE+KEY+…, as keygen writes it).", completion: .file())
    public var key: String
    /// Where to write the signed note.
    @Option(help: "Also write the signed note to this new file.", completion: .file()) public var out: String?
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Signs and prints.
    public func run() throws {
      // Everything that can be refused is checked before the log is opened for writing.
      let signer = try TreeFiles.signer(key)
      if let out, FileManager.default.fileExists(atPath: out) {
        throw LogToolError.badInput("cannot create the checkpoint file \(TreeFiles.absolute(out)): it already exists")
      }
      // Opened read-only first: a missing or foreign directory is refused, never turned into a new log.
      try log.openReadOnly().close()
      // Signing opens no record: an encrypted log needs no key.
      let note = try ActionLog.signCheckpoint(directory: log.url, with: signer)
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let checkpoint = try Checkpoint(parsing: note.text)
      if let out { try TreeFiles.create(out, note.formatted, what: "checkpoint file") }
      var stdout = StandardOutput()
      defer { stdout.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", actionLog.path)
        json.field("origin", checkpoint.origin)
        json.field("treeSize", checkpoint.size)
        json.field("rootHash", checkpoint.rootHash.hex)
        json.field("key", signer.verifier.text)
        json.field("checkpointsStored", try actionLog.checkpoints().count)
        json.key("out")
        if let out { json.string(TreeFiles.absolute(out)) } else { json.null() }
        json.field("note", note.formattedText)
        json.endObject()
        stdout.line(json.text)
        return
      }
      var fields = FieldList()
      fields.add("log", actionLog.path)
      fields.add("origin", checkpoint.origin)
      fields.add("tree size", String(checkpoint.size))
      fields.add("root", checkpoint.rootHash.hex)
      fields.add("key", signer.verifier.text)
      let kept = try actionLog.checkpoints().count
      fields.add("stored", "in the log (\(kept) checkpoint\(kept == 1 ? "" : "s") kept)")
      if let out { fields.add("written", TreeFiles.absolute(out)) }
      for line in fields.lines { stdout.line(line) }
      stdout.line()
      stdout.write(note.formatted)
    }
  }
}
#endif  // LogTool
