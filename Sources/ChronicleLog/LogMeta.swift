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

/// The hash of the last entry before the first one a log holds.
public struct ChainAnchor: Sendable, Hashable {
  /// The sequence number the hash belongs to (0 if no entry was ever removed).
  public var seq: UInt64
  /// The hash of entry ``seq``: the "previous hash" of entry `seq + 1`.
  public var hash: [UInt8]

  /// The anchor of a log that was never compacted.
  public static let genesis = ChainAnchor(seq: 0, hash: Chain.genesis)

  /// Creates an anchor.
  public init(seq: UInt64, hash: [UInt8]) {
    self.seq = seq
    self.hash = hash
  }
}

/// The keys and byte layouts of the meta database. `docs/log-format.md` is the specification.
enum MetaKey {
  /// u32 BE format version.
  static let format = "format"
  /// UTF-8 app identifier.
  static let app = "app"
  /// u32 BE action schema version.
  static let schema = "schema"
  /// i64 BE creation time, µs since 1970.
  static let created = "created"
  /// u64 BE seq followed by the 32-byte hash.
  static let anchor = "anchor"
}
