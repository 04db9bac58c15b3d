#if LogTool
import ArgumentParser
import ChronicleLog

extension LogTool {
  /// `logtool list LOG`: a table of entries, filtered.
  public struct List: ParsableCommand {
    /// `list`.
    public static let configuration = CommandConfiguration(
      abstract: "List entries: seq, time (UTC), kind, flags, type, size and metadata.",
      discussion: """
        Times for --since and --until are ISO 8601 (2026-01-01, 2026-01-01T12:00:00Z, \
        2026-01-01T14:00+02:00); without a zone they are UTC. Both bounds are inclusive.
        FLAGS: E sent by an effect, U not undoable, G continues the previous entry's undo group.
        A restore, undo or redo entry shows the state it returns to, following jumps that target jumps \
        back to the original action.
        --type NAME also matches the names nested under NAME (--type todos matches todos.add).
        """)

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The first sequence number to list.
    @Option(help: "The first sequence number to list.") public var from: UInt64?
    /// The last sequence number to list.
    @Option(help: "The last sequence number to list.") public var to: UInt64?
    /// Type names to keep.
    @Option(
      name: .customLong("type"),
      help: "Only entries of this action type or one nested under it (repeat for several).")
    public var types: [String] = []
    /// Kinds to keep.
    @Option(
      name: .customLong("kind"),
      help: "Only entries of this kind: action, restore, undo, redo or marker (repeat for several).")
    public var kinds: [String] = []
    /// Metadata pairs every listed entry must carry.
    @Option(
      name: .customLong("meta"), help: "Only entries whose metadata has KEY=VALUE (repeat: all must match).")
    public var metadata: [String] = []
    /// The earliest time.
    @Option(help: "Only entries written at or after this time (ISO 8601).") public var since: String?
    /// The latest time.
    @Option(help: "Only entries written at or before this time (ISO 8601).") public var until: String?
    /// How many entries at most.
    @Option(help: "List at most this many entries (with --reverse, the newest).") public var limit: Int?
    /// Newest first.
    @Flag(help: "List the newest entries first.") public var reverse = false
    /// JSON Lines.
    @Flag(help: "Print JSON Lines: one JSON object per entry, as it is read (for streams).")
    public var jsonl = false
    /// `--json`.
    @OptionGroup public var output: OutputOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Checks the kinds, metadata pairs, times and range.
    public func validate() throws {
      for kind in kinds where EntryKind(name: kind) == nil {
        throw ValidationError("unknown kind '\(kind)': use action, restore, undo, redo or marker")
      }
      for pair in metadata where Self.pair(pair) == nil {
        throw ValidationError("--meta '\(pair)' is not KEY=VALUE (e.g. --meta user=jenny)")
      }
      for (name, text) in [("--since", since), ("--until", until)] {
        if let text, ISOTime.parse(text) == nil {
          throw ValidationError("\(name) '\(text)' is not an ISO 8601 time (e.g. 2026-01-01T12:00:00Z)")
        }
      }
      if let from, let to, from > to { throw ValidationError("--from \(from) is after --to \(to)") }
      if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
      if jsonl, output.json { throw ValidationError("--json and --jsonl exclude each other") }
    }

    /// `key=value` split at the first `=`; the key must not be empty.
    static func pair(_ text: String) -> (key: String, value: String)? {
      guard let equals = text.firstIndex(of: "="), equals > text.startIndex else { return nil }
      return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    var filter: EntryFilter {
      EntryFilter(
        from: from, to: to, types: Set(types), kinds: Set(kinds.compactMap(EntryKind.init(name:))),
        metadata: metadata.compactMap(Self.pair), since: since.flatMap(ISOTime.parse),
        until: until.flatMap(ISOTime.parse))
    }

    /// Prints the table (or the JSON array, or JSON Lines).
    public func run() throws {
      let actionLog = try log.openReadOnly()
      defer { try? actionLog.close() }
      let filter = filter
      let range = try actionLog.bounds().flatMap(filter.range(within:))
      let limit = limit ?? .max
      var jumps = JumpResolver(actionLog)
      var out = StandardOutput()
      defer { out.flush() }

      if output.json || jsonl {
        var json = JSONWriter()
        if output.json { json.beginArray() }
        var shown = 0
        if let range, limit > 0 {
          try RecordWalk.forEach(actionLog, in: range, reverse: reverse) { record in
            guard filter.matches(record) else { return true }
            if jsonl {
              var line = JSONWriter()
              record.writeJSON(into: &line, jump: jumps.resolve(record))
              out.write(line.bytes)
              out.line()
            } else {
              record.writeJSON(into: &json, jump: jumps.resolve(record))
              if json.bytes.count >= 1 << 16 {
                out.write(json.bytes)
                json.bytes.removeAll(keepingCapacity: true)
              }
            }
            shown += 1
            return shown < limit
          }
        }
        if output.json {
          json.endArray()
          out.write(json.bytes)
          out.line()
        }
        return
      }

      // First pass: the column widths and where the listing ends; second pass: the rows.
      var layout = TableLayout(StoredEntry.tableColumns)
      layout.fit(column: 1, width: 24)
      var shown = 0
      var lastShown: UInt64?
      if let range, limit > 0 {
        try RecordWalk.forEach(actionLog, in: range, reverse: reverse) { record in
          guard filter.matches(record) else { return true }
          layout.fit(Array(record.rowCells(jump: jumps.resolve(record)).dropLast()))
          shown += 1
          lastShown = record.seq
          return shown < limit
        }
      }
      out.line(layout.header)
      guard let range, let lastShown else { return }
      let shownRange = reverse ? lastShown...range.upperBound : range.lowerBound...lastShown
      try RecordWalk.forEach(actionLog, in: shownRange, reverse: reverse) { record in
        guard filter.matches(record) else { return true }
        out.line(layout.line(record.rowCells(jump: jumps.resolve(record))))
        return true
      }
    }
  }
}
#endif  // LogTool
