import Foundation
import ChronicleLMDB

extension ActionLog {
  /// Stores a snapshot of the state after entry `seq`, tied to the chain by that entry's hash.
  ///
  /// - Throws: ``LogError/noSuchEntry(path:seq:)`` if the log holds no entry `seq`
  ///   (seq 0, the state before any entry, is allowed for a log that was never compacted).
  @discardableResult
  public func writeSnapshot(
    at seq: UInt64, state: [UInt8], codec: PayloadCodec, schemaVersion: UInt32, auxiliary: [UInt8] = []
  ) throws -> Snapshot {
    try ensureWritable()
    let chainHash: [UInt8]
    let anchor = try meta().anchor
    if seq == anchor.seq {
      chainHash = anchor.hash
    } else if let record = try record(at: seq) {
      chainHash = record.hash
    } else {
      throw LogError.noSuchEntry(path: path, seq: seq)
    }
    let snapshot = Snapshot(
      seq: seq, timestamp: Date().microsecondsSince1970, codec: codec, schemaVersion: schemaVersion,
      chainHash: chainHash, state: state, auxiliary: auxiliary)
    let value = try SnapshotFormat.encode(snapshot, cipher: cipher)
    try storage {
      try environment.write { txn in
        try withSequenceKey(seq) { key in
          try value.withUnsafeBytes { try txn.put($0, forKey: key, in: snapshotsDB) }
        }
      }
    }
    return snapshot
  }

  /// The snapshot taken at `seq`, or `nil`.
  ///
  /// - Throws: ``LogError/corruptSnapshot(path:seq:reason:)`` if its bytes were changed.
  public func snapshot(at seq: UInt64) throws -> Snapshot? {
    try ensureOpen()
    return try storage {
      try environment.read { txn in
        try withSequenceKey(seq) { key in
          try txn.withValue(forKey: key, in: snapshotsDB) { try decodeSnapshot(seq: seq, value: $0) }
        }
      }
    }
  }

  /// Every snapshot's description, oldest first. Unreadable ones are listed with what their header says.
  public func snapshots() throws -> [SnapshotInfo] {
    try ensureOpen()
    return try storage {
      try environment.read { txn in
        try txn.withCursor(on: snapshotsDB) { cursor in
          var infos: [SnapshotInfo] = []
          var item = try cursor.first()
          while let (key, value) = item {
            infos.append(snapshotInfo(seq: try decodeKey(key), value: value))
            item = try cursor.next()
          }
          return infos
        }
      }
    }
  }

  /// Calls `body` with the descriptions of the snapshots at or before `seq`
  /// (and after `floor`, if given), newest first, until it returns `false`.
  /// Finds each by a seek, so it costs the same however many snapshots the log keeps.
  public func forEachSnapshot(
    atOrBefore seq: UInt64, after floor: UInt64? = nil, _ body: (SnapshotInfo) throws -> Bool
  ) throws {
    try ensureOpen()
    var upper = seq
    while true {
      // One snapshot per read transaction: `body` may read the log itself.
      let info: SnapshotInfo? = try environment.read { txn in
        try txn.withCursor(on: snapshotsDB) { cursor in
          var item = try withSequenceKey(upper, { try cursor.seek(atMost: $0) })
          // Snapshots are a cache: a damaged key is passed over (verify reports it).
          while let (key, value) = item {
            if let seq = try? sequence(fromKey: key), seq <= upper { return snapshotInfo(seq: seq, value: value) }
            item = try cursor.previous()
          }
          return nil
        }
      }
      guard let info, floor.map({ info.seq > $0 }) ?? true, try body(info), info.seq > 0 else { return }
      upper = info.seq - 1
    }
  }

  /// A snapshot's description from its stored header (whatever the rest holds).
  func snapshotInfo(seq: UInt64, value: UnsafeRawBufferPointer) -> SnapshotInfo {
    var reader = ByteReader(value)
    _ = try? reader.integer(UInt8.self, "layout version")
    let codec = (try? reader.integer(UInt8.self, "codec")).flatMap(PayloadCodec.init(rawValue:)) ?? .json
    _ = try? reader.integer(UInt16.self, "reserved")
    let schemaVersion = (try? reader.integer(UInt32.self, "schema version")) ?? 0
    _ = try? reader.integer(UInt64.self, "seq")
    let timestamp = (try? reader.integer(Int64.self, "timestamp")) ?? 0
    return SnapshotInfo(seq: seq, timestamp: timestamp, codec: codec, schemaVersion: schemaVersion, size: value.count)
  }

  /// The newest snapshot at or before `seq` (any seq for `nil`) that reads back intact,
  /// skipping damaged ones; also returns the damaged ones it skipped, newest first.
  public func latestSnapshot(atOrBefore seq: UInt64? = nil) throws
    -> (snapshot: Snapshot?, skipped: [LogError])
  {
    var skipped: [LogError] = []
    for info in try snapshots().reversed() where info.seq <= (seq ?? .max) {
      do {
        if let snapshot = try snapshot(at: info.seq) { return (snapshot, skipped) }
      } catch let error as LogError where error.isCorruptSnapshot {
        skipped.append(error)
      }
    }
    return (nil, skipped)
  }

  /// Deletes the snapshot at `seq`; returns whether there was one.
  @discardableResult
  public func deleteSnapshot(at seq: UInt64) throws -> Bool {
    try ensureWritable()
    return try storage {
      try environment.write { txn in try withSequenceKey(seq) { try txn.delete(forKey: $0, in: snapshotsDB) } }
    }
  }

  /// Deletes all but the newest `count` snapshots; returns how many were deleted.
  @discardableResult
  public func pruneSnapshots(keepingLatest count: Int) throws -> Int {
    try ensureWritable()
    let doomed = try snapshots().dropLast(max(count, 0))
    guard !doomed.isEmpty else { return 0 }
    try storage {
      try environment.write { txn in
        for info in doomed { try withSequenceKey(info.seq) { _ = try txn.delete(forKey: $0, in: snapshotsDB) } }
      }
    }
    return doomed.count
  }

  func decodeSnapshot(seq: UInt64, value: UnsafeRawBufferPointer) throws(LogError) -> Snapshot {
    do { return try SnapshotFormat.decode(seq: seq, value: value, cipher: cipher) } catch {
      switch error.sealed {
      case .missingKey(let keyID): throw .snapshotKeyMissing(path: path, seq: seq, keyID: keyID)
      case .rejected(let keyID): throw .snapshotDecryptionFailed(path: path, seq: seq, keyID: keyID)
      case nil: throw .corruptSnapshot(path: path, seq: seq, reason: error.description)
      }
    }
  }
}

extension LogError {
  /// Whether this is a snapshot that cannot be used (damaged, or sealed with a key that is missing
  /// or does not open it): readers skip it for an older one.
  var isCorruptSnapshot: Bool {
    switch self {
    case .corruptSnapshot, .snapshotKeyMissing, .snapshotDecryptionFailed: true
    default: false
    }
  }
}
