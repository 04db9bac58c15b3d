#if LogTool
import ArgumentParser
import ChronicleLog

extension LogTool {
  /// `logtool stats LOG`: counts and bytes per action type and per kind, entries per day.
  public struct Stats: ParsableCommand {
    /// `stats`.
    public static let configuration = CommandConfiguration(
      abstract: "Count entries and bytes per action type and per kind, and entries per day (UTC).",
      discussion: "Also shows the reader table (live and stale readers) and the free pages, as info does.")

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    private struct Tally {
      var entries = 0
      var bytes = 0

      mutating func add(_ size: Int) {
        entries += 1
        bytes += size
      }
    }

    /// Counts and prints.
    public func run() throws {
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let total = try actionLog.count()
      let progress = ProgressBar("stats", unit: "entries")
      var all = Tally()
      var types: [String: Tally] = [:]
      var kinds: [EntryKind: Tally] = [:]
      var days: [String: Tally] = [:]
      var range: ClosedRange<UInt64>?
      var period: (first: Int64, last: Int64)?
      let bounds = try actionLog.bounds()
      if let bounds { try RecordWalk.forEach(actionLog, in: bounds, chunk: 4096) { record in
        let size = record.storedSize
        all.add(size)
        types[record.typeName, default: Tally()].add(size)
        kinds[record.kind, default: Tally()].add(size)
        days[ISOTime.day(micros: record.timestamp), default: Tally()].add(size)
        range = range.map { $0.lowerBound...record.seq } ?? record.seq...record.seq
        period =
          period.map { (min($0.first, record.timestamp), max($0.last, record.timestamp)) }
          ?? (record.timestamp, record.timestamp)
        if all.entries % 16_384 == 0 { progress.update(all.entries, total) }
        return true
      } }
      progress.finish()
      let storage = try StorageReport(actionLog)
      let byType = types.sorted {
        $0.value.entries != $1.value.entries ? $0.value.entries > $1.value.entries : $0.key < $1.key
      }
      let byKind = kinds.sorted { $0.key.rawValue < $1.key.rawValue }
      let byDay = days.sorted { $0.key < $1.key }
      var out = StandardOutput()
      defer { out.flush() }

      if output.json {
        var json = JSONWriter()
        json.beginObject()
        json.field("path", actionLog.path)
        json.field("entries", all.entries)
        json.field("bytes", all.bytes)
        json.key("range")
        if let range {
          json.beginObject()
          json.field("first", range.lowerBound)
          json.field("last", range.upperBound)
          json.endObject()
        } else {
          json.null()
        }
        for (name, key, rows) in [
          ("types", "type", byType.map { ($0.key, $0.value) }),
          ("kinds", "kind", byKind.map { ($0.key.description, $0.value) }),
          ("days", "day", byDay.map { ($0.key, $0.value) }),
        ] {
          json.key(name)
          json.beginArray()
          for (label, tally) in rows {
            json.beginObject()
            json.field(key, label)
            json.field("entries", tally.entries)
            json.field("bytes", tally.bytes)
            json.endObject()
          }
          json.endArray()
        }
        storage.writeJSON(into: &json)
        json.endObject()
        out.line(json.text)
        return
      }

      var fields = FieldList()
      fields.add("entries", "\(Format.grouped(all.entries)) (\(Format.range(range)))")
      fields.add("bytes", Format.bytes(all.bytes))
      fields.add("period", period.map { "\(Format.time($0.first)) … \(Format.time($0.last))" } ?? "-")
      storage.addFields(to: &fields)
      for line in fields.lines { out.line(line) }
      for (title, rows) in [
        ("TYPE", byType.map { ($0.key, $0.value) }), ("KIND", byKind.map { ($0.key.description, $0.value) }),
        ("DAY (UTC)", byDay.map { ($0.key, $0.value) }),
      ] {
        var table = Table([(title, .left), ("ENTRIES", .right), ("BYTES", .right), ("AVG", .right)])
        for (label, tally) in rows {
          table.append([
            label, Format.grouped(tally.entries), Format.grouped(tally.bytes),
            Format.grouped(tally.bytes / max(tally.entries, 1)),
          ])
        }
        out.line()
        for line in table.lines { out.line(line) }
      }
    }
  }
}
#endif  // LogTool
