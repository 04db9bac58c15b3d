import CustomDump
import IssueReporting

/// A place in the test's source where a failure is reported.
struct SourceSite: Sendable {
  var fileID: StaticString
  var filePath: StaticString
  var line: UInt
  var column: UInt

  /// Reports a test failure here, to XCTest or Swift Testing (whichever runs the test).
  func fail(_ message: String) {
    reportIssue(message, fileID: fileID, filePath: filePath, line: line, column: column)
  }
}

/// How actions are named in failure messages: their dump, on one line.
func describe(_ value: some Any) -> String {
  let lines = String(customDumping: value).split(separator: "\n").map { $0.trimmingPrefix(while: \.isWhitespace) }
  var text = ""
  for line in lines {
    if text.hasSuffix(",") { text += " " }
    text += line
  }
  return text
}

/// `text` with every line indented by two spaces.
func indented(_ text: String) -> String {
  text.split(separator: "\n", omittingEmptySubsequences: false).map { "  \($0)" }.joined(separator: "\n")
}

/// A readable difference between two values: only the lines that differ are
/// marked, `−` for the first value and `+` for the second.
func difference<Value>(_ first: Value, _ second: Value) -> String {
  if let lines = diff(first, second, format: .proportional) { return indented(lines) }
  // Values that are unequal but dump alike (NaN, reference identity): show both.
  return indented("\u{2212} \(describe(first))\n+ \(describe(second))")
}

/// "1 action", "2 actions".
func counted(_ count: Int, _ noun: String) -> String {
  "\(count) \(noun)\(count == 1 ? "" : "s")"
}
