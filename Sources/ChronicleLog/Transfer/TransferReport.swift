import Foundation

// MARK: - Reports and errors

/// What an export file holds: written by ``ActionLog/export(to:through:progress:)``,
/// read back by ``ActionLog/checkExport(at:progress:)`` and ``ActionLog/importLog(from:into:progress:)``.
///
/// ```swift
/// let written = try log.export(to: URL(fileURLWithPath: "ledger.jsonl"))
/// let read = try ActionLog.checkExport(at: URL(fileURLWithPath: "ledger.jsonl"))
/// assert(read.head == written.head)
/// ```
public struct TransferReport: Sendable, Hashable {
  /// The export file (or, for an import, the new log's directory); `nil` for a streamed export.
  public var path: String?
  /// The meta data the export carries: format, app, schema, created time and the anchor its chain starts from.
  public var meta: LogMeta
  /// The first and last sequence numbers of its entries, `nil` when it holds none.
  public var range: ClosedRange<UInt64>?
  /// The number of entries.
  public var entries: Int
  /// The sequence numbers of its snapshots, ascending.
  public var snapshots: [UInt64]
  /// The last entry's sequence number and hash (the anchor when there are no entries).
  public var head: ChainAnchor
  /// The size of the export in bytes.
  public var bytes: Int
  /// The log identifier the export carries (`nil` in a version-1 export: an import gives the new log a fresh one).
  public var logID: [UInt8]? = nil
  /// The sizes of the stored checkpoints the export carries, each checked against its entries when read.
  public var checkpoints: [UInt64] = []
  /// The number of Merkle tree hashes left of the anchor the export carries.
  public var treeHashes: Int = 0
}
