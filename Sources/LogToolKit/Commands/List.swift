import ArgumentParser
import ChronicleLog

extension LogTool {
  /// `logtool list LOG`: a table of entries, filtered.
  public struct List: ParsableCommand {
    /// `list`.
    public static let configuration = CommandConfiguration(
      abstract: "List entries: seq, time (UTC), kind, type, size and metadata.",
      discussion: "Times for --since and --until are ISO 8601 (2026-01-01, 2026-01-01T12:00:00Z, "
        + "2026-01-01T14:00+02:00); without a zone they are UTC. Both bounds are inclusive.")

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The first sequence number to list.
    @Option(help: "The first sequence number to list.") public var from: UInt64?
    /// The last sequence number to list.
    @Option(help: "The last sequence number to list.") public var to: UInt64?
    /// Type names to keep.
    @Option(name: .customLong("type"), help: "Only entries of this action type (repeat for several).")
    public var types: [String] = []
    /// Kinds to keep.
    @Option(
      name: .customLong("kind"),
      help: "Only entries of this kind: action, restore, undo, redo or marker (repeat for several).")
    public var kinds: [String] = []
    /// The earliest time.
    @Option(help: "Only entries written at or after this time (ISO 8601).") public var since: String?
    /// The latest time.
    @Option(help: "Only entries written at or before this time (ISO 8601).") public var until: String?
    /// How many entries at most.
    @Option(help: "List at most this many entries.") public var limit: Int?
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Checks the kinds, times and range.
    public func validate() throws {
      for kind in kinds where EntryKind(name: kind) == nil {
        throw ValidationError("unknown kind '\(kind)': use action, restore, undo, redo or marker")
      }
      for (name, text) in [("--since", since), ("--until", until)] {
        if let text, ISOTime.parse(text) == nil {
          throw ValidationError("\(name) '\(text)' is not an ISO 8601 time (e.g. 2026-01-01T12:00:00Z)")
        }
      }
      if let from, let to, from > to { throw ValidationError("--from \(from) is after --to \(to)") }
      if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    var filter: EntryFilter {
      EntryFilter(
        from: from, to: to, types: Set(types), kinds: Set(kinds.compactMap(EntryKind.init(name:))),
        since: since.flatMap(ISOTime.parse), until: until.flatMap(ISOTime.parse))
    }

    /// Prints the table (or the JSON array).
    public func run() throws {
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let filter = filter
      let range = try actionLog.bounds().flatMap(filter.range(within:))
      let limit = limit ?? .max
      var out = StandardOutput()
      defer { out.flush() }

      if output.json {
        var json = JSONWriter()
        json.beginArray()
        var shown = 0
        if let range, limit > 0 {
          try walk(actionLog, range) { record in
            guard filter.matches(record) else { return }
            record.writeJSON(into: &json)
            shown += 1
            if json.bytes.count >= 1 << 16 {
              out.write(json.bytes)
              json.bytes.removeAll(keepingCapacity: true)
            }
            if shown >= limit { throw StopWalking() }
          }
        }
        json.endArray()
        out.write(json.bytes)
        out.line()
        return
      }

      // First pass: the column widths and where the listing ends; second pass: the rows.
      var layout = TableLayout(LogRecord.tableColumns)
      var shown = 0
      var lastShown: UInt64?
      if let range, limit > 0 {
        try walk(actionLog, range) { record in
          guard filter.matches(record) else { return }
          layout.fit(column: 0, width: String(record.seq).count)
          layout.fit(column: 2, width: record.kind.description.count)
          layout.fit(column: 3, width: record.typeName.count)
          layout.fit(column: 4, width: String(record.storedSize).count)
          layout.fit(column: 1, width: 24)
          shown += 1
          lastShown = record.seq
          if shown >= limit { throw StopWalking() }
        }
      }
      out.line(layout.header)
      guard let range, let lastShown else { return }
      try walk(actionLog, range.lowerBound...lastShown) { record in
        guard filter.matches(record) else { return }
        out.line(layout.line(record.rowCells))
      }
    }

    private func walk(_ log: ActionLog, _ range: ClosedRange<UInt64>, _ body: (LogRecord) throws -> Void) throws {
      do { try log.forEach(in: range, body) } catch is StopWalking {}
    }
  }
}
