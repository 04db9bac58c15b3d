#if LogTool
import ChronicleLog

/// Which entries `list` shows: a sequence range, type names, kinds, metadata pairs and a time window.
package struct EntryFilter {
  package var from: UInt64?
  package var to: UInt64?
  package var types: Set<String> = []
  package var kinds: Set<EntryKind> = []
  /// Pairs the entry's metadata must all hold.
  package var metadata: [(key: String, value: String)] = []
  /// µs since 1970, inclusive.
  package var since: Int64?
  /// µs since 1970, inclusive.
  package var until: Int64?

  /// The part of `bounds` the filter's sequence range covers, or `nil` if none.
  package func range(within bounds: ClosedRange<UInt64>) -> ClosedRange<UInt64>? {
    let lower = max(from ?? bounds.lowerBound, bounds.lowerBound)
    let upper = min(to ?? bounds.upperBound, bounds.upperBound)
    return lower <= upper ? lower...upper : nil
  }

  package func matches(_ record: StoredEntry) -> Bool {
    if !types.isEmpty, !types.contains(where: { Self.typeName(record.typeName, isOrIsNestedUnder: $0) }) {
      return false
    }
    for pair in metadata where record.metadata[pair.key] != pair.value { return false }
    if !kinds.isEmpty, !kinds.contains(record.kind) { return false }
    if let since, record.timestamp < since { return false }
    if let until, record.timestamp > until { return false }
    return true
  }

  /// Whether `name` is `type` or a name nested under it (`todos.add` under `todos`).
  package static func typeName(_ name: String, isOrIsNestedUnder type: String) -> Bool {
    name == type || (name.hasPrefix(type) && name.utf8.dropFirst(type.utf8.count).first == UInt8(ascii: "."))
  }
}

extension EntryFilter {
  /// A filter that keeps every entry (set its fields to narrow it).
  package static var everything: EntryFilter { EntryFilter() }
}
#endif  // LogTool
