import ChronicleLog
import Foundation
import Synchronization

/// What opening a log did.
public struct RecoveryReport: Sendable, Hashable {
  /// The snapshot recovery started from, or `nil` for a replay from the initial state.
  public var snapshotSeq: UInt64?
  /// Entries folded after the snapshot.
  public var entriesReplayed: Int
  /// The last sequence number in the log.
  public var lastSeq: UInt64
  /// How long recovery took.
  public var duration: Duration
  /// What was skipped and why (snapshots of another state schema, damaged snapshots).
  public var warnings: [String]

  @usableFromInline
  init(snapshotSeq: UInt64?, entriesReplayed: Int, lastSeq: UInt64, duration: Duration, warnings: [String]) {
    self.snapshotSeq = snapshotSeq
    self.entriesReplayed = entriesReplayed
    self.lastSeq = lastSeq
    self.duration = duration
    self.warnings = warnings
  }
}

extension RecoveryReport: CustomStringConvertible {
  /// One line, durations in readable units:
  /// `RecoveryReport(snapshotSeq: 2000, entriesReplayed: 445, lastSeq: 2445, duration: 7.4 ms, warnings: [])`.
  public var description: String {
    "RecoveryReport(snapshotSeq: \(snapshotSeq.map(String.init) ?? "nil"), entriesReplayed: \(entriesReplayed), "
      + "lastSeq: \(lastSeq), duration: \(Self.readable(duration)), warnings: \(warnings))"
  }

  /// `195 µs`, `7.4 ms`, `2.31 s`.
  static func readable(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let micros = Double(seconds) * 1e6 + Double(attoseconds) / 1e12
    func rounded(_ value: Double, _ digits: Int) -> String {
      let scale = digits == 1 ? 10.0 : 100.0
      let text = String((value * scale).rounded() / scale)
      return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
    if micros < 1_000 { return "\(Int(micros.rounded())) µs" }
    if micros < 1_000_000 { return "\(rounded(micros / 1_000, 1)) ms" }
    return "\(rounded(micros / 1_000_000, 2)) s"
  }
}
