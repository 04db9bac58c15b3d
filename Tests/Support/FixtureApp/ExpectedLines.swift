import Foundation

// MARK: - The lines of expected.jsonl

/// One entry line of a fixture's `expected.jsonl`.
public struct FixtureEntryLine: Codable, Sendable {
  /// The entry's sequence number.
  public var seq: UInt64
  /// Its kind, as `EntryKind.description` spells it.
  public var kind: String
  /// Its flags' raw value.
  public var flags: UInt8
  /// Its codec, as `PayloadCodec.description` spells it.
  public var codec: String
  /// Its schema version.
  public var schemaVersion: UInt32
  /// Its timestamp in microseconds since 1970.
  public var timestamp: Int64
  /// Its type name.
  public var typeName: String
  /// Its metadata.
  public var metadata: [String: String]
  /// Its payload in lower-case hexadecimal.
  public var payloadHex: String
  /// Its hash in lower-case hexadecimal.
  public var hashHex: String

  /// A line.
  public init(
    seq: UInt64, kind: String, flags: UInt8, codec: String, schemaVersion: UInt32, timestamp: Int64,
    typeName: String, metadata: [String: String], payloadHex: String, hashHex: String
  ) {
    self.seq = seq
    self.kind = kind
    self.flags = flags
    self.codec = codec
    self.schemaVersion = schemaVersion
    self.timestamp = timestamp
    self.typeName = typeName
    self.metadata = metadata
    self.payloadHex = payloadHex
    self.hashHex = hashHex
  }
}

/// One snapshot line of a fixture's `expected.jsonl`.
public struct FixtureSnapshotLine: Codable, Sendable {
  /// The sequence number the snapshot is at.
  public var snapshot: UInt64
  /// Its timestamp in microseconds since 1970.
  public var timestamp: Int64
  /// Its codec, as `PayloadCodec.description` spells it.
  public var codec: String
  /// Its schema version.
  public var schemaVersion: UInt32
  /// The state's bytes in lower-case hexadecimal.
  public var stateHex: String
  /// The chain hash it records, in lower-case hexadecimal.
  public var chainHashHex: String
  /// Its auxiliary bytes in lower-case hexadecimal.
  public var auxiliaryHex: String

  /// A line.
  public init(
    snapshot: UInt64, timestamp: Int64, codec: String, schemaVersion: UInt32, stateHex: String,
    chainHashHex: String, auxiliaryHex: String
  ) {
    self.snapshot = snapshot
    self.timestamp = timestamp
    self.codec = codec
    self.schemaVersion = schemaVersion
    self.stateHex = stateHex
    self.chainHashHex = chainHashHex
    self.auxiliaryHex = auxiliaryHex
  }
}

/// The last line of a fixture's `expected.jsonl`: the chain head, the entry count, the folded
/// counter and the meta data.
public struct FixtureHeadLine: Codable, Sendable {
  /// The head hash in lower-case hexadecimal.
  public var head: String
  /// The number of entries.
  public var count: Int
  /// The counter after folding every action.
  public var finalCount: Int
  /// The log's format version.
  public var formatVersion: UInt32
  /// The log's application identifier.
  public var appID: String
  /// The log's schema version.
  public var schemaVersion: UInt32
  /// The log's creation time in microseconds since 1970.
  public var created: Int64

  /// A line.
  public init(
    head: String, count: Int, finalCount: Int, formatVersion: UInt32, appID: String, schemaVersion: UInt32,
    created: Int64
  ) {
    self.head = head
    self.count = count
    self.finalCount = finalCount
    self.formatVersion = formatVersion
    self.appID = appID
    self.schemaVersion = schemaVersion
    self.created = created
  }
}

/// Lower-case hexadecimal of `bytes`, as `expected.jsonl` writes bytes.
public func fixtureHex(_ bytes: some Sequence<UInt8>) -> String {
  bytes.map { String(format: "%02x", $0) }.joined()
}
