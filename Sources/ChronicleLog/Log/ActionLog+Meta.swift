import ChronicleLMDB

extension ActionLog {
  /// The log's meta data, read now (a compaction by another process may change the anchor).
  public func meta() throws -> LogMeta {
    try ensureOpen()
    return try Self.readMeta(environment, metaDB, path: path)
  }

  /// Records that the app now writes action schema version `version`.
  public func setSchemaVersion(_ version: UInt32) throws {
    try ensureWritable()
    try storage {
      try environment.write { txn in try MetaRecord.writeSchema(version, in: txn, db: metaDB) }
    }
  }

  static func readMeta(_ env: Environment, _ db: Database, path: String) throws(LogError) -> LogMeta {
    let values = try storage { try env.read { txn in try MetaRecord.values(in: txn, db: db) } }
    return try MetaRecord.decode(values, path: path)
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
