import ChronicleLMDB

/// The meta database's record: its keys and the byte layout of each value, encoded and decoded in
/// this one place for every writer (a new log, an import, a salvage, a compaction's new anchor) and
/// every reader (opening a log, checking an export's anchor). Its keys are ``MetaKey``'s;
/// `docs/log-format.md` is the specification.
enum MetaRecord {
  /// Every key a reader reads: those ``write(_:in:db:)`` writes, in that order, then the mark of an
  /// unfinished import.
  static let keys = [
    MetaKey.format, MetaKey.app, MetaKey.schema, MetaKey.created, MetaKey.anchor, MetaKey.unfinishedImport,
  ]

  // MARK: - Encoding

  /// The anchor's value: its seq (u64 BE) followed by its hash.
  static func anchorValue(_ anchor: ChainAnchor) -> [UInt8] {
    var writer = ByteWriter(capacity: 40)
    writer.append(bigEndian: anchor.seq)
    writer.append(anchor.hash)
    return writer.bytes
  }

  /// The value of a fixed-width integer field, big-endian.
  static func integerValue<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    var writer = ByteWriter(capacity: MemoryLayout<T>.size)
    writer.append(bigEndian: value)
    return writer.bytes
  }

  /// Writes every field of `meta`.
  static func write(_ meta: LogMeta, in txn: Transaction, db: Database) throws {
    try txn.put(integerValue(meta.formatVersion), forKey: Array(MetaKey.format.utf8), in: db)
    try txn.put(Array(meta.appID.utf8), forKey: Array(MetaKey.app.utf8), in: db)
    try txn.put(integerValue(meta.schemaVersion), forKey: Array(MetaKey.schema.utf8), in: db)
    try txn.put(integerValue(meta.created), forKey: Array(MetaKey.created.utf8), in: db)
    try writeAnchor(meta.anchor, in: txn, db: db)
  }

  /// Writes the anchor alone (a compaction moves it).
  static func writeAnchor(_ anchor: ChainAnchor, in txn: Transaction, db: Database) throws {
    try txn.put(anchorValue(anchor), forKey: Array(MetaKey.anchor.utf8), in: db)
  }

  /// Writes the schema version alone.
  static func writeSchema(_ version: UInt32, in txn: Transaction, db: Database) throws {
    try txn.put(integerValue(version), forKey: Array(MetaKey.schema.utf8), in: db)
  }

  // MARK: - Decoding

  /// The stored value of every key (absent keys are left out).
  static func values(in txn: Transaction, db: Database) throws -> [String: [UInt8]] {
    var values: [String: [UInt8]] = [:]
    for key in keys { values[key] = try txn.get(forKey: Array(key.utf8), in: db) }
    return values
  }

  /// Decodes the values ``values(in:db:)`` read, naming the log at `path` and the field in any error.
  static func decode(_ values: [String: [UInt8]], path: String) throws(LogError) -> LogMeta {
    func integer<T: FixedWidthInteger>(_ key: String, _: T.Type) throws(LogError) -> T {
      guard let bytes = values[key] else { throw .corruptMeta(path: path, reason: "'\(key)' is missing") }
      guard bytes.count == MemoryLayout<T>.size else {
        throw .corruptMeta(path: path, reason: "'\(key)' has \(bytes.count) bytes, expected \(MemoryLayout<T>.size)")
      }
      return bytes.reduce(T.zero) { $0 << 8 | T($1) }
    }
    guard values[MetaKey.format] != nil else {
      throw .notALog(path: path, reason: "its meta database has no format version")
    }
    if values[MetaKey.unfinishedImport] != nil { throw .unfinishedImport(path: path) }
    let format = try integer(MetaKey.format, UInt32.self)
    guard format <= ActionLog.encryptedFormatVersion else {
      throw .newerFormat(path: path, found: format, supported: ActionLog.encryptedFormatVersion)
    }
    guard let app = values[MetaKey.app], let appID = String(validating: app, as: UTF8.self) else {
      throw .corruptMeta(path: path, reason: "'app' is missing or not UTF-8")
    }
    guard let anchor = values[MetaKey.anchor], anchor.count == 40 else {
      throw .corruptMeta(path: path, reason: "'anchor' is missing or not 40 bytes")
    }
    let anchorSeq = anchor.prefix(8).reduce(UInt64.zero) { $0 << 8 | UInt64($1) }
    guard anchorSeq < UInt64.max else {
      throw .corruptMeta(
        path: path,
        reason: "the anchor's sequence number \(anchorSeq) is the largest there is: no entry could follow it")
    }
    return LogMeta(
      formatVersion: format, appID: appID, schemaVersion: try integer(MetaKey.schema, UInt32.self),
      created: try integer(MetaKey.created, Int64.self),
      anchor: ChainAnchor(seq: anchorSeq, hash: Array(anchor.suffix(32))))
  }
}
