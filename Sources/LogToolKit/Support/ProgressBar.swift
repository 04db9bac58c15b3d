import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A progress bar with rate and time left, drawn on standard error only when it is a
/// terminal: scripts and pipes see nothing extra.
final class ProgressBar {
  private let enabled: Bool
  private var label: String
  private var start = Date()
  private var lastDraw = Date.distantPast
  private var drawn = false

  /// A bar labelled `label`; drawn only if standard error is a terminal.
  init(_ label: String, enabled: Bool = isatty(2) == 1) {
    self.label = label
    self.enabled = enabled
  }

  /// Starts a new phase with its own label, rate and time left.
  func phase(_ label: String) {
    guard label != self.label else { return }
    finishLine()
    self.label = label
    start = Date()
    lastDraw = .distantPast
  }

  /// Shows `done` of `total` (at most ten times a second).
  func update(_ done: Int, _ total: Int) {
    guard enabled else { return }
    let now = Date()
    guard now.timeIntervalSince(lastDraw) >= 0.1 || (done >= total && total > 0) else { return }
    lastDraw = now
    let elapsed = now.timeIntervalSince(start)
    let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
    let width = 24
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    let rate = elapsed > 0 ? Double(done) / elapsed : 0
    var text = "\r\(label) [\(bar)] \(Int(fraction * 100))% \(Format.grouped(done))/\(Format.grouped(total))"
    text += "  \(Self.compact(rate))/s"
    if rate > 0, done < total { text += "  ETA \(Self.duration(Double(total - done) / rate))" }
    StandardError.raw(text + "\u{1B}[K")
    drawn = true
  }

  /// Clears the bar's line.
  func finish() { finishLine() }

  private func finishLine() {
    guard enabled, drawn else { return }
    StandardError.raw("\r\u{1B}[K")
    drawn = false
  }

  private static func compact(_ rate: Double) -> String {
    switch rate {
    case 1e6...: String(format: "%.1fM", rate / 1e6)
    case 1e3...: String(format: "%.1fk", rate / 1e3)
    default: String(format: "%.0f", rate)
    }
  }

  private static func duration(_ seconds: Double) -> String {
    let total = Int(seconds.rounded(.up))
    return total >= 3600
      ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
      : String(format: "%d:%02d", total / 60, total % 60)
  }
}
