import LMDB

extension ActionLog {
  /// The log's meta data, read now (a compaction by another process may change the anchor).
  public func meta() throws -> LogMeta {
    try ensureOpen()
    return try Self.readMeta(environment, metaDB, path: path)
  }

  /// Records that the app now writes action schema version `version`.
  public func setSchemaVersion(_ version: UInt32) throws {
    try ensureWritable()
    var writer = ByteWriter()
    writer.append(bigEndian: version)
    try storage {
      try environment.write { txn in try txn.put(writer.bytes, forKey: Array(MetaKey.schema.utf8), in: metaDB) }
    }
  }

  static func readMeta(_ env: Environment, _ db: Database, path: String) throws(LogError) -> LogMeta {
    let values: [String: [UInt8]] = try storage {
      try env.read { txn in
        var values: [String: [UInt8]] = [:]
        for key in [MetaKey.format, MetaKey.app, MetaKey.schema, MetaKey.created, MetaKey.anchor] {
          values[key] = try txn.get(forKey: Array(key.utf8), in: db)
        }
        return values
      }
    }
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
    let format = try integer(MetaKey.format, UInt32.self)
    guard format <= ActionLog.formatVersion else {
      throw .newerFormat(path: path, found: format, supported: ActionLog.formatVersion)
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

  /// The last entry's seq and hash, or the anchor of an empty log.
  static func readHead(_ env: Environment, _ db: Database, meta: LogMeta, path: String) throws(LogError) -> ChainAnchor {
    try storage {
      try env.read { txn in
        try txn.withCursor(on: db) { cursor in
          guard let (key, value) = try cursor.last() else { return meta.anchor }
          guard let seq = try? sequence(fromKey: key) else {
            throw LogError.corruptEntry(path: path, seq: 0, reason: "the last key has \(key.count) bytes, not 8")
          }
          guard value.count >= EntryFormat.hashSize else {
            throw LogError.corruptEntry(path: path, seq: seq, reason: "value of \(value.count) bytes holds no hash")
          }
          return ChainAnchor(seq: seq, hash: Array(value.suffix(EntryFormat.hashSize)))
        }
      }
    }
  }

  func ensureWritable() throws(LogError) {
    try ensureOpen()
    guard access == .readWrite else { throw .readOnly(path: path) }
  }
}
