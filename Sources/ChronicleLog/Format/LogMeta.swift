import Foundation

/// The log's meta data: what it is, who wrote it, and where its chain starts.
public struct LogMeta: Sendable, Hashable {
  /// The on-disk format version (``ActionLog/formatVersion`` for logs this version writes).
  public var formatVersion: UInt32
  /// The identifier of the app that created the log.
  public var appID: String
  /// The newest action schema version that wrote to the log.
  public var schemaVersion: UInt32
  /// When the log was created, µs since 1970.
  public var created: Int64
  /// Where the chain starts: the last sequence number removed by compaction and its hash
  /// (seq 0 and 32 zero bytes for a log that was never compacted).
  public var anchor: ChainAnchor
}
