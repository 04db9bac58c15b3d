import Foundation
import ChronicleLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What ``ActionLog/rekey(directory:from:to:progress:)`` did.
public struct RekeyReport: Sendable, Hashable {
  /// The log's directory.
  public var path: String
  /// The entries rewritten.
  public var entries: Int
  /// The snapshots rewritten (those that did not open are dropped: they are a cache).
  public var snapshots: Int
  /// The key that seals the rewritten log's records (`nil`: the log is now in the clear).
  public var keyID: UInt32?
  /// The rewritten log's new identifier (meta `log-id`): its chain and tree are new.
  public var logID: [UInt8]
}

extension ActionLog {
  /// The name of the directory, inside the log's, where rekeying builds the new data file.
  static let rekeyDirectoryName = ".rekey-tmp"

  /// Rewrites the log at `directory` with every entry and snapshot sealed by `newRing`'s newest key
  /// (`nil`: in the clear), reading them with `oldRing` (`nil` for a log in the clear). Use it while
  /// the app is stopped.
  ///
  /// The chain and the Merkle tree cover the stored bytes, so the rewritten log has a new chain, a
  /// new tree and a new log id; its stored checkpoints are not carried over (they commit to the old
  /// bytes), and the tree hashes that commit to entries a compaction removed are. The swap is
  /// compaction's (``compact(directory:before:disposal:progress:)``, step 5): the new data file is
  /// built in `.rekey-tmp` inside the log, synced, and renamed over `data.mdb`. A killed rekey leaves
  /// the old log or the new one, never a mix; the next writer (an app, a rekey) removes a leftover `.rekey-tmp`.
  ///
  /// - Throws: ``LogError``: ``LogError/logHasProblems(path:report:)`` when the log does not
  ///   verify, ``LogError/keyMissing(path:seq:keyID:)`` and ``LogError/decryptionFailed(path:seq:keyID:)``
  ///   when `oldRing` does not open an entry, ``LogError/encryptionMismatch(path:reason:)``, and the
  ///   errors of opening a log. On any error the log is unchanged.
  @discardableResult
  public static func rekey(
    directory: URL, from oldRing: KeyRing?, to newRing: KeyRing?, progress: ((Int, Int) -> Void)? = nil
  ) throws -> RekeyReport {
    let directoryPath = directory.standardizedFileURL.path
    guard FileManager.default.fileExists(atPath: directoryPath + "/" + LogDirectory.dataFile) else {
      throw LogError.notALog(path: directoryPath, reason: "it holds no \(LogDirectory.dataFile)")
    }
    let log = try ActionLog(
      directory: directory, access: .readWrite,
      options: Options(durability: .full, flushInterval: nil, createIfMissing: false, keyRing: oldRing))
    defer { try? log.close() }
    // Opening the log for writing removed what a killed rekey left.
    let workPath = log.path + "/" + rekeyDirectoryName
    let verification = try log.verify()
    guard verification.isValid else { throw LogError.logHasProblems(path: log.path, report: verification) }
    guard mkdir(workPath, 0o700) == 0 else {
      throw LogError.io(path: workPath, operation: "create", reason: String(cString: strerror(errno)))
    }
    defer { try? FileManager.default.removeItem(atPath: workPath) }
    let report = try log.writeRekeyed(to: workPath, ring: newRing, progress: progress)
    let newData = workPath + "/" + LogDirectory.dataFile
    chmod(newData, 0o600)
    try DurableFile.sync(newData)
    try log.swapDataFile(newData)
    try log.close()
    return report
  }

  /// Writes the rekeyed copy of this log into a new environment at `workPath`.
  private func writeRekeyed(to workPath: String, ring: KeyRing?, progress: ((Int, Int) -> Void)?) throws
    -> RekeyReport
  {
    var meta = try meta()
    meta.formatVersion = ring == nil ? Self.formatVersion : Self.encryptedFormatVersion
    var generator = SystemRandomNumberGenerator()
    let logID = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let cipher = ring.map { RecordCipher(ring: $0, logID: logID) }
    let size = max(64 << 20, 2 * (try fileSize()))
    let target = try Environment(path: workPath, configuration: .init(mapSize: size, maxDatabases: 8))
    defer { target.close() }
    let (entries, snapshots, tree) = try target.write { txn in
      let metaDB = try txn.openDatabase(named: "meta", create: true)
      try MetaRecord.write(meta, in: txn, db: metaDB)
      try txn.put(logID, forKey: Array(TreeStorage.logIDKey.utf8), in: metaDB)
      _ = try txn.openDatabase(named: TreeStorage.checkpointsName, create: true)
      return (
        try txn.openDatabase(named: "entries", create: true), try txn.openDatabase(named: "snapshots", create: true),
        try txn.openDatabase(named: TreeStorage.treeName, create: true)
      )
    }
    // The tree hashes that commit to entries a compaction removed: those bytes never change.
    try copyTreeHashes(endingBy: meta.anchor.seq, into: target, tree)

    var report = RekeyReport(path: path, entries: 0, snapshots: 0, keyID: ring?.current.id, logID: logID)
    var hashes: [UInt64: [UInt8]] = [meta.anchor.seq: meta.anchor.hash]
    let snapshotSeqs = Set(try self.snapshots().map(\.seq))
    var previous = meta.anchor
    let total = try count()
    if let bounds = try bounds() {
      var lower = bounds.lowerBound
      while lower <= bounds.upperBound {
        let upper = min(bounds.upperBound, lower + Self.scanChunk - 1)
        let records = try self.records(in: lower...upper)
        try target.write { txn in
          for record in records {
            let entry = NewEntry(
              kind: record.kind, flags: record.flags, typeName: record.typeName, metadata: record.metadata,
              codec: record.codec, schemaVersion: record.schemaVersion, payload: record.payload,
              timestamp: record.timestamp)
            var writer = ByteWriter(capacity: record.payload.count + 128)
            if let cipher, let ring {
              try EntryFormat.encodeSealedBody(
                entry, timestamp: record.timestamp, seq: record.seq, cipher: cipher, ring: ring, into: &writer)
            } else {
              try EntryFormat.encodeBody(entry, timestamp: record.timestamp, into: &writer)
            }
            let hash = writer.bytes.withUnsafeBytes { Chain.hash(previous: previous.hash, seq: record.seq, body: $0) }
            writer.append(hash)
            try withSequenceKey(record.seq) { key in
              try writer.bytes.withUnsafeBytes { try txn.put($0, forKey: key, in: entries, flags: .append) }
            }
            previous = ChainAnchor(seq: record.seq, hash: hash)
            if snapshotSeqs.contains(record.seq) { hashes[record.seq] = hash }
          }
        }
        report.entries += records.count
        progress?(report.entries, total)
        lower = upper + 1
      }
    }
    for seq in snapshotSeqs.sorted() {
      guard var snapshot = try? snapshot(at: seq), let hash = hashes[seq] else { continue }
      snapshot.chainHash = hash
      let value = try SnapshotFormat.encode(snapshot, cipher: cipher)
      try target.write { txn in
        try withSequenceKey(seq) { key in try value.withUnsafeBytes { try txn.put($0, forKey: key, in: snapshots) } }
      }
      report.snapshots += 1
    }
    try target.sync(force: true)
    return report
  }

  /// Copies the stored subtrees that end at or before `anchor` into `tree` of `target`.
  private func copyTreeHashes(endingBy anchor: UInt64, into target: Environment, _ tree: Database) throws {
    guard anchor > 0 else { return }
    var kept: [([UInt8], [UInt8])] = []
    try environment.read { txn in
      guard let source = try? txn.openDatabase(named: TreeStorage.treeName) else { return }
      try txn.withCursor(on: source) { cursor in
        var item = try cursor.first()
        while let (key, value) = item {
          if key.count == 9 {
            let level = UInt64(key[0])
            let index = key[1...].reduce(UInt64.zero) { $0 << 8 | UInt64($1) }
            if level < 64, (index + 1) << level <= anchor { kept.append((Array(key), Array(value))) }
          }
          item = try cursor.next()
        }
      }
    }
    try target.write { txn in for (key, value) in kept { try txn.put(value, forKey: key, in: tree) } }
  }
}
