import Foundation

/// `1,234,567` with thousands separators.
func grouped(_ value: Double) -> String {
  guard value.isFinite else { return "–" }
  let digits = String(Int(value.rounded()))
  let negative = digits.hasPrefix("-")
  var body = Array(negative ? digits.dropFirst() : digits[...])
  var index = body.count - 3
  while index > 0 {
    body.insert(",", at: index)
    index -= 3
  }
  return (negative ? "-" : "") + String(body)
}

/// A rate: `12,345/s`, or `1.23 M/s` from a million up.
func rate(_ value: Double?) -> String {
  guard let value, value.isFinite else { return "–" }
  if value >= 1_000_000 { return String(format: "%.2f M/s", value / 1_000_000) }
  return grouped(value) + "/s"
}

/// Milliseconds with three significant digits: `0.412 ms`, `12.3 ms`, `1,234 ms`.
func milliseconds(_ value: Double?) -> String {
  guard let value, value.isFinite else { return "–" }
  switch value {
  case ..<1: return String(format: "%.3f ms", value)
  case ..<10: return String(format: "%.2f ms", value)
  case ..<100: return String(format: "%.1f ms", value)
  default: return grouped(value) + " ms"
  }
}

/// Seconds: `0.123 s`, `12.3 s`.
func secondsText(_ value: Double?) -> String {
  guard let value, value.isFinite else { return "–" }
  return value < 10 ? String(format: "%.3f s", value) : String(format: "%.1f s", value)
}

/// A ratio: `0.45×`, `12.3×`, `1,234×`.
func ratio(_ numerator: Double?, _ denominator: Double?) -> String {
  guard let numerator, let denominator, denominator > 0, numerator.isFinite else { return "–" }
  return times(numerator / denominator)
}

/// A factor: `0.45×`, `12.3×`.
func times(_ value: Double) -> String {
  switch value {
  case ..<10: return String(format: "%.2f×", value)
  case ..<100: return String(format: "%.1f×", value)
  default: return grouped(value) + "×"
  }
}

/// A percentage: `45 %`.
func percent(_ value: Double) -> String { String(format: "%.0f %%", value * 100) }

/// Bytes as MiB: `12.3 MiB`.
func mebibytes(_ value: Double?) -> String {
  guard let value, value.isFinite else { return "–" }
  return String(format: "%.1f MiB", value / 1_048_576)
}

/// A byte count: `123 B`.
func bytesText(_ value: Double?) -> String {
  guard let value, value.isFinite else { return "–" }
  return String(format: "%.0f B", value)
}

/// A log length: `10k`, `1M`.
func lengthText(_ length: Int) -> String {
  if length >= 1_000_000, length % 1_000_000 == 0 { return "\(length / 1_000_000)M" }
  if length >= 1_000, length % 1_000 == 0 { return "\(length / 1_000)k" }
  return "\(length)"
}

/// A markdown table.
struct Table {
  var header: [String]
  var rows: [[String]] = []

  init(_ header: String...) { self.header = header }
  init(_ header: [String]) { self.header = header }

  mutating func add(_ cells: String...) { rows.append(cells) }

  var markdown: String {
    var lines = ["| " + header.joined(separator: " | ") + " |"]
    lines.append("|" + header.enumerated().map { $0.offset == 0 ? "---" : "--:" }.joined(separator: "|") + "|")
    for row in rows { lines.append("| " + row.joined(separator: " | ") + " |") }
    return lines.joined(separator: "\n")
  }
}
