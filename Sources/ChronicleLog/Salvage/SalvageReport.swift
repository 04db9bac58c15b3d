import Foundation
import ChronicleLMDB

/// What ``ActionLog/salvage(from:into:)`` copied into the new log, and what it lost.
public struct SalvageReport: Sendable, Hashable, CustomStringConvertible {
  /// A snapshot that was not copied, and why.
  public struct LostSnapshot: Sendable, Hashable, CustomStringConvertible {
    /// The sequence number the snapshot was taken at.
    public var seq: UInt64
    /// Why it was not copied.
    public var reason: String
    /// `snapshot 300: its checksum or layout is wrong`.
    public var description: String { "snapshot \(seq): \(reason)" }

    /// Creates a finding (for tools that carry reports between processes).
    package init(seq: UInt64, reason: String) {
      self.seq = seq
      self.reason = reason
    }
  }

  /// A checkpoint of the damaged log that the new log does not keep, and why.
  public struct DroppedCheckpoint: Sendable, Hashable, CustomStringConvertible {
    /// The checkpoint's tree size (the key it was stored under).
    public var size: UInt64
    /// Why it was not kept.
    public var reason: String
    /// `checkpoint of size 300: it covers 300 entries, more than the 120 that survived`.
    public var description: String { "checkpoint of size \(size): \(reason)" }

    /// Creates a finding (for tools that carry reports between processes).
    package init(size: UInt64, reason: String) {
      self.size = size
      self.reason = reason
    }
  }

  /// The damaged log's directory.
  public var source: String
  /// The new log's directory.
  public var destination: String
  /// The anchor both logs start from.
  public var anchor: ChainAnchor
  /// Entries the new log holds, every one read and its chain hash checked from the anchor.
  public var entriesCopied = 0
  /// The new log's last entry (the anchor when no entry could be copied).
  public var head: ChainAnchor
  /// The damaged log's last sequence number, or `nil` if even that could not be read.
  public var sourceLastSeq: UInt64?
  /// Why the copy of entries stopped before the damaged log's end (`nil` if nothing was lost).
  public var stopReason: String?
  /// The snapshots copied, by sequence number.
  public var snapshotsCopied: [UInt64] = []
  /// The snapshots not copied, with the reason.
  public var snapshotsLost: [LostSnapshot] = []
  /// The sizes of the checkpoints kept: the salvaged entries produce each one's root.
  public var checkpointsKept: [UInt64] = []
  /// The checkpoints not kept, with the reason (one larger than what survived, one whose root the
  /// salvaged entries do not produce).
  public var checkpointsDropped: [DroppedCheckpoint] = []
  /// Set when one of the damaged log's two LMDB meta pages was damaged: the salvage read the log
  /// through the other one, as of an earlier commit, and says which.
  public var metaPageRepair: String?

  /// Creates a report of nothing copied yet (for tools that carry reports between processes).
  package init(source: String, destination: String, anchor: ChainAnchor, head: ChainAnchor) {
    self.source = source
    self.destination = destination
    self.anchor = anchor
    self.head = head
  }

  /// The first entry lost, or `nil` when every entry was copied.
  public var firstLostSeq: UInt64? { stopReason == nil ? nil : (head.seq == .max ? .max : head.seq + 1) }

  /// The entries lost when the damaged log's end is known.
  public var lostEntries: ClosedRange<UInt64>? {
    guard let first = firstLostSeq, let last = sourceLastSeq, first <= last else { return nil }
    return first...last
  }

  /// Whether every entry, snapshot and checkpoint was copied (never after a meta page repair: the
  /// last commit may be the one the damaged meta page named).
  public var isComplete: Bool {
    stopReason == nil && snapshotsLost.isEmpty && checkpointsDropped.isEmpty && metaPageRepair == nil
  }

  /// One line per finding: what was copied, which entries and snapshots were lost and why.
  public var description: String {
    var lines = metaPageRepair.map { [$0] } ?? []
    lines.append("copied entries \(anchor.seq &+ 1)…\(head.seq) (\(entriesCopied)) and \(snapshotsCopied.count) snapshots")
    if let first = firstLostSeq, let stopReason {
      if let lost = lostEntries {
        lines.append("lost entries \(lost.lowerBound)…\(lost.upperBound) (\(lost.upperBound - lost.lowerBound + 1)): \(stopReason)")
      } else if sourceLastSeq == nil {
        lines.append("lost entries from \(first) on (the damaged log's last entry cannot be read): \(stopReason)")
      } else {
        lines.append("lost: \(stopReason)")
      }
    }
    for snapshot in snapshotsLost { lines.append("lost \(snapshot)") }
    if !checkpointsKept.isEmpty { lines.append("kept \(checkpointsKept.count) checkpoints") }
    for checkpoint in checkpointsDropped { lines.append("dropped \(checkpoint)") }
    return lines.joined(separator: "\n")
  }
}
