import Foundation
import ChronicleLMDB

/// What ``ActionLog/compact(directory:before:disposal:progress:)`` did.
public struct CompactionReport: Sendable, Hashable {
  /// The log's directory.
  public var path: String
  /// The sequence number asked for (`--before`).
  public var requested: UInt64
  /// Where the log was cut: the newest snapshot at or before ``requested``.
  /// Entries up to and including it are gone; the log now starts at `cut + 1`.
  public var cut: UInt64
  /// The chain anchor before the compaction.
  public var anchorBefore: ChainAnchor
  /// The chain anchor after it: entry ``cut`` and its hash.
  public var anchorAfter: ChainAnchor
  /// Entries removed (0 when an earlier run had already cut here).
  public var entriesRemoved: Int
  /// Snapshots removed (those older than ``cut``).
  public var snapshotsRemoved: Int
  /// The archive written (or reused), if one was asked for and entries were removed.
  public var archive: TransferReport?
  /// Whether the archive was left complete by an interrupted earlier run and reused.
  public var archiveReused: Bool
  /// The size of `data.mdb` before, in bytes.
  public var bytesBefore: Int
  /// The size of `data.mdb` after, in bytes.
  public var bytesAfter: Int
}
