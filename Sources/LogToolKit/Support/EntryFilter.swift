import ChronicleLog

/// Which entries `list` shows: a sequence range, type names, kinds, metadata pairs and a time window.
struct EntryFilter {
  var from: UInt64?
  var to: UInt64?
  var types: Set<String> = []
  var kinds: Set<EntryKind> = []
  /// Pairs the entry's metadata must all hold.
  var metadata: [(key: String, value: String)] = []
  /// µs since 1970, inclusive.
  var since: Int64?
  /// µs since 1970, inclusive.
  var until: Int64?

  /// The part of `bounds` the filter's sequence range covers, or `nil` if none.
  func range(within bounds: ClosedRange<UInt64>) -> ClosedRange<UInt64>? {
    let lower = max(from ?? bounds.lowerBound, bounds.lowerBound)
    let upper = min(to ?? bounds.upperBound, bounds.upperBound)
    return lower <= upper ? lower...upper : nil
  }

  func matches(_ record: StoredEntry) -> Bool {
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
  static func typeName(_ name: String, isOrIsNestedUnder type: String) -> Bool {
    name == type || (name.hasPrefix(type) && name.utf8.dropFirst(type.utf8.count).first == UInt8(ascii: "."))
  }
}
