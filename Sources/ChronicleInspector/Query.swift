#if Inspector
import ChronicleCBOR
import ChronicleLog
import LogToolKit

/// A request's query parameters, checked: anything bad or too large is an ``APIError`` (400)
/// that names the parameter.
struct Query {
  /// The longest value any parameter may have.
  static let maxValueLength = 1024
  /// The most values one query may carry.
  static let maxParameters = 64

  private(set) var pairs: [(name: String, value: String)] = []

  init(_ pairs: [(name: String, value: String)]) throws {
    guard pairs.count <= Self.maxParameters else {
      throw APIError.badRequest("too many query parameters (\(pairs.count); at most \(Self.maxParameters))")
    }
    for pair in pairs where pair.value.utf8.count > Self.maxValueLength || pair.name.utf8.count > 64 {
      throw APIError.badRequest("query parameter '\(pair.name.prefix(64))' is too long (at most \(Self.maxValueLength) bytes)")
    }
    self.pairs = pairs
  }

  func all(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

  func string(_ name: String) throws -> String? {
    let values = all(name)
    guard values.count <= 1 else { throw APIError.badRequest("'\(name)' is given \(values.count) times; give it once") }
    return values.first
  }

  func seq(_ name: String) throws -> UInt64? {
    guard let text = try string(name) else { return nil }
    guard let value = UInt64(text) else {
      throw APIError.badRequest("'\(name)' must be a sequence number (0…\(UInt64.max)), not '\(text.prefix(40))'")
    }
    return value
  }

  func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
    guard let text = try string(name) else { return nil }
    guard let value = Int(text), range.contains(value) else {
      throw APIError.badRequest(
        "'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text.prefix(40))'")
    }
    return value
  }

  func time(_ name: String) throws -> Int64? {
    guard let text = try string(name) else { return nil }
    guard let micros = ISOTime.parse(text) else {
      throw APIError.badRequest("'\(name)' is not an ISO 8601 time (e.g. 2026-01-01T12:00:00Z): '\(text.prefix(40))'")
    }
    return micros
  }

  /// The entry filter of `type`, `kind`, `meta`, `since` and `until`.
  func filter() throws -> EntryFilter {
    var filter = EntryFilter.everything
    filter.types = Set(all("type").filter { !$0.isEmpty })
    for name in all("kind") where !name.isEmpty {
      guard let kind = EntryKind(name: name) else {
        throw APIError.badRequest("unknown kind '\(name.prefix(40))': use action, restore, undo, redo or marker")
      }
      filter.kinds.insert(kind)
    }
    for pair in all("meta") where !pair.isEmpty {
      guard let equals = pair.firstIndex(of: "="), equals > pair.startIndex else {
        throw APIError.badRequest("meta '\(pair.prefix(40))' is not KEY=VALUE (e.g. meta=user=jenny)")
      }
      filter.metadata.append((String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
    }
    filter.since = try time("since")
    filter.until = try time("until")
    if let since = filter.since, let until = filter.until, since > until {
      throw APIError.badRequest("'since' is after 'until'")
    }
    return filter
  }

  /// Whether any of the filter's parameters (or a payload search) is set.
  var filters: Bool {
    pairs.contains { ["type", "kind", "meta", "since", "until", "q"].contains($0.name) && !$0.value.isEmpty }
  }
}
#endif  // Inspector
