#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

extension LogTool {
  /// `logtool show LOG SEQ`: one entry in full, its payload as pretty JSON; for a restore, undo
  /// or redo entry, the state it returns to.
  public struct Show: ParsableCommand {
    /// `show`.
    public static let configuration = CommandConfiguration(
      abstract: "Show one entry in full, its payload as JSON (whatever its codec).")

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The entry's sequence number.
    @Argument(help: "The entry's sequence number.") public var seq: UInt64
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Prints the entry.
    public func run() throws {
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      guard let record = try actionLog.record(at: seq) else {
        let anchor = try actionLog.meta().anchor
        let bounds = try actionLog.bounds()
        var reason = "\(actionLog.path) has no entry \(seq)"
        if seq <= anchor.seq, seq > 0 {
          reason += ": compaction removed it (the log starts after \(anchor.seq))"
        } else if let bounds {
          reason += " (it holds \(bounds.lowerBound)…\(bounds.upperBound))"
        } else {
          reason += " (it holds no entries)"
        }
        throw LogToolError.badInput(reason)
      }
      if let keyFile = log.keyFile, let keyID = record.sealedKeyID {
        throw LogToolError.logProblem(
          "entry \(seq) of \(actionLog.path) is sealed with key \(EncryptionKey.idText(keyID)), which \(keyFile) "
            + "does not hold: the key was removed from the ring, or the entry's key id was changed")
      }
      var out = StandardOutput()
      defer { out.flush() }
      var jumps = JumpResolver(actionLog)
      let jump = jumps.resolve(record)
      if output.json {
        var json = JSONWriter()
        record.writeJSON(into: &json, jump: jump)
        out.line(json.text)
        return
      }
      var fields = FieldList()
      fields.add("seq", String(record.seq))
      fields.add("time", "\(Format.time(record.timestamp)) (\(record.timestamp) µs)")
      fields.add("kind", record.kind.description)
      let flags = Format.flagNames(record.flags)
      fields.add("flags", flags.isEmpty ? "-" : flags.joined(separator: ", "))
      fields.add("type", record.typeName)
      if let jump {
        // A jump to a jump: show each step back to the entry whose state it is.
        fields.add("target", jump.chain.map(String.init).joined(separator: " → "))
        fields.add("returns to", jump.summary)
      }
      fields.add("codec", record.codec.description)
      fields.add("schema", String(record.schemaVersion))
      fields.add("size", "\(record.storedSize) bytes (payload \(record.payload.count))")
      let metadata = record.metadata.sorted { $0.key < $1.key }
      if metadata.isEmpty { fields.add("metadata", "-") }
      for (index, pair) in metadata.enumerated() {
        fields.add(index == 0 ? "metadata" : "", Format.pair(pair))
      }
      fields.add("hash", record.hash.hex)
      for line in fields.lines { out.line(line) }
      if let keyID = record.sealedKeyID {
        out.line("payload  encrypted with key \(EncryptionKey.idText(keyID)) (give its key file with --key-file)")
        return
      }
      do {
        let payload = Format.indented(json: try PayloadText.compactJSON(record.payload, codec: record.codec))
        out.line("payload")
        out.line(payload)
      } catch {
        out.line("payload  (does not decode as \(record.codec): \(error))")
        out.line("base64   \(record.payload.base64)")
      }
    }
  }
}
#endif  // LogTool
