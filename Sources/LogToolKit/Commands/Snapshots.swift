#if LogTool
import ArgumentParser
import ChronicleLog

extension LogTool {
  /// `logtool snapshots LOG`: the stored snapshots.
  public struct Snapshots: ParsableCommand {
    /// `snapshots`.
    public static let configuration = CommandConfiguration(
      abstract: "List the snapshots: seq, time, size, codec and state schema version.")

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Prints the snapshots.
    public func run() throws {
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let snapshots = try actionLog.snapshots()
      var out = StandardOutput()
      defer { out.flush() }
      if output.json {
        var json = JSONWriter()
        json.beginArray()
        for snapshot in snapshots {
          json.beginObject()
          json.field("seq", snapshot.seq)
          json.field("timestamp", Int(snapshot.timestamp))
          json.field("time", Format.time(snapshot.timestamp))
          json.field("size", snapshot.size)
          json.field("codec", snapshot.codec.description)
          json.field("schemaVersion", Int(snapshot.schemaVersion))
          json.endObject()
        }
        json.endArray()
        out.line(json.text)
        return
      }
      var table = Table([("SEQ", .right), ("TIME", .left), ("SIZE", .right), ("CODEC", .left), ("SCHEMA", .right)])
      for snapshot in snapshots {
        table.append([
          String(snapshot.seq), Format.shortTime(snapshot.timestamp), Format.grouped(snapshot.size),
          snapshot.codec.description, String(snapshot.schemaVersion),
        ])
      }
      for line in table.lines { out.line(line) }
    }
  }
}
#endif  // LogTool
