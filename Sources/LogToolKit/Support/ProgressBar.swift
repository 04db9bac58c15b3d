#if LogTool
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
///
/// Numbers use the same format as every other output (`12,345`). A step counted in one
/// unit (`0/1`, a file copy) shows no counts and no rate, only the time it has taken; a rate
/// appears once it means something (half a second in, at least one item done).
final class ProgressBar {
  private let enabled: Bool
  private let unit: String
  private var label: String
  private var start = Date()
  private var lastDraw = Date.distantPast
  private var drawn = false

  /// A bar labelled `label`, counting `unit` (`entries`); drawn only if standard error is a terminal.
  init(_ label: String, unit: String = "entries", enabled: Bool = isatty(2) == 1) {
    self.label = label
    self.unit = unit
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
    let text = Self.render(label: label, done: done, total: total, elapsed: now.timeIntervalSince(start), unit: unit)
    StandardError.raw("\r" + text + "\u{1B}[K")
    drawn = true
  }

  /// Clears the bar's line.
  func finish() { finishLine() }

  private func finishLine() {
    guard enabled, drawn else { return }
    StandardError.raw("\r\u{1B}[K")
    drawn = false
  }

  /// The bar's text: `verify [######------------------] 25%  2,500/10,000 entries  12,345 entries/s  ETA 0:01`,
  /// or `cutting  0:02` for a step of one unit.
  static func render(label: String, done: Int, total: Int, elapsed: Double, unit: String) -> String {
    guard total > 1 else { return "\(label)  \(duration(elapsed))" }
    let done = min(max(done, 0), total)
    let fraction = Double(done) / Double(total)
    let width = 24
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    var text = "\(label) [\(bar)] \(Int(fraction * 100))%  \(Format.grouped(done))/\(Format.grouped(total)) \(unit)"
    guard elapsed >= 0.5, done > 0 else { return text }
    let rate = Double(done) / elapsed
    text += "  \(Format.grouped(Int(rate.rounded()))) \(unit)/s"
    if done < total { text += "  ETA \(duration(Double(total - done) / rate))" }
    return text
  }

  /// `0:07`, `1:02:03`.
  static func duration(_ seconds: Double) -> String {
    let total = seconds.isFinite ? Int(max(0, seconds).rounded(.up)) : 0
    return total >= 3600
      ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
      : String(format: "%d:%02d", total / 60, total % 60)
  }
}
#endif  // LogTool
