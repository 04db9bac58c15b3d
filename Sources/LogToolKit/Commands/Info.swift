#if LogTool
import ArgumentParser
import ChronicleLog

extension LogTool {
  /// `logtool info LOG`: what the log is, how much it holds, and where its chain starts and ends.
  public struct Info: ParsableCommand {
    /// `info`.
    public static let configuration = CommandConfiguration(
      abstract: "Show the log's format, app, schema, entries, snapshots, file size, chain head and anchor.",
      discussion: "It also lists what a killed import (.NAME.import-* beside the log), compaction "
        + "or rekey (.compact-tmp or .rekey-tmp inside it) left behind; the next import, or the next writer, removes them. "
        + "Then the reader table (live and stale readers, with their pids) and the free pages: "
        + "a stale reader (a process that died inside a read transaction) keeps a writer from reusing pages "
        + "until the writer clears it.")

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Prints the summary.
    public func run() throws {
      let actionLog: ActionLog
      do {
        actionLog = try log.openReadOnly()
      } catch LogError.noSuchLog(let path) {
        // No log yet, but an import into this path may have been stopped: say where its leftover is.
        let leftovers = ActionLog.leftovers(of: log.url)
        guard !leftovers.isEmpty else { throw LogError.noSuchLog(path: path) }
        throw LogToolError.badInput(
          "no log at \(path): the path does not exist; found \(leftovers.map(Self.describe).joined(separator: "; "))")
      }
      defer { try? actionLog.close() }
      let meta = try actionLog.meta()
      let count = try actionLog.count()
      let bounds = try actionLog.bounds()
      let first = try bounds.flatMap { try actionLog.record(at: $0.lowerBound) }
      let last = try bounds.flatMap { try actionLog.record(at: $0.upperBound) }
      let snapshots = try actionLog.snapshots()
      let head = try actionLog.head()
      let fileSize = try actionLog.fileSize()
      let leftovers = ActionLog.leftovers(of: log.url)
      let storage = try StorageReport(actionLog)
      var out = StandardOutput()
      defer { out.flush() }

      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", actionLog.path)
        json.field("formatVersion", Int(meta.formatVersion))
        json.field("appID", meta.appID)
        json.field("schemaVersion", Int(meta.schemaVersion))
        json.field("created", Int(meta.created))
        json.field("createdTime", Format.time(meta.created))
        json.field("entries", count)
        for (name, record) in [("first", first), ("last", last)] {
          json.key(name)
          if let record {
            json.beginObject()
            json.field("seq", record.seq)
            json.field("timestamp", Int(record.timestamp))
            json.field("time", Format.time(record.timestamp))
            json.endObject()
          } else {
            json.null()
          }
        }
        json.field("snapshots", snapshots.count)
        json.field("fileSize", fileSize)
        json.key("head")
        head.writeJSON(into: &json)
        json.key("anchor")
        meta.anchor.writeJSON(into: &json)
        json.key("leftovers")
        json.beginArray()
        for leftover in leftovers {
          json.beginObject()
          json.field("path", leftover.path)
          json.field("origin", leftover.origin.rawValue)
          json.field("bytes", leftover.bytes)
          json.key("pid")
          if let pid = leftover.pid { json.int(Int(pid)) } else { json.null() }
          json.key("creatorRunning")
          if let running = leftover.creatorRunning { json.bool(running) } else { json.null() }
          json.endObject()
        }
        json.endArray()
        storage.writeJSON(into: &json)
        json.endObject()
        out.line(json.text)
        return
      }

      var fields = FieldList()
      fields.add("path", actionLog.path)
      fields.add("format", String(meta.formatVersion))
      fields.add("app", meta.appID.isEmpty ? "(none)" : meta.appID)
      fields.add("schema", String(meta.schemaVersion))
      fields.add("created", Format.time(meta.created))
      fields.add("entries", Format.grouped(count))
      fields.add("first", first.map { "\($0.seq)  \(Format.time($0.timestamp))" } ?? "-")
      fields.add("last", last.map { "\($0.seq)  \(Format.time($0.timestamp))" } ?? "-")
      fields.add(
        "snapshots", snapshots.isEmpty ? "0" : "\(snapshots.count) (newest at \(snapshots.last!.seq))")
      fields.add("file size", Format.bytes(fileSize))
      fields.add("chain head", head.text)
      fields.add("anchor", meta.anchor.text + (meta.anchor.seq == 0 ? " (never compacted)" : " (compacted)"))
      for (index, leftover) in leftovers.enumerated() {
        fields.add(index == 0 ? "leftovers" : "", Self.describe(leftover))
      }
      storage.addFields(to: &fields)
      for line in fields.lines { out.line(line) }
    }

    /// `PATH (12.0 MiB) from a killed import (process 4242, gone): the next import into this path removes it`.
    static func describe(_ leftover: TransferLeftover) -> String {
      var text = "\(leftover.path) (\(Format.bytes(leftover.bytes)))"
      switch leftover.origin {
      case .import:
        switch (leftover.pid, leftover.creatorRunning) {
        case (let pid?, true?): text += " from an import running as process \(pid)"
        case (let pid?, _):
          text += " from a killed import (process \(pid), gone): the next import into this path removes it"
        default: text += " from an interrupted import of an older version: remove it by hand"
        }
      case .compaction:
        text += " from an interrupted compaction: the next writer removes it"
      case .rekey:
        text += " from an interrupted rekey: the next writer removes it"
      }
      return text
    }
  }
}
#endif  // LogTool
