import Foundation
import ChronicleLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension ActionLog {
  /// The name of the directory, inside the log's, where compaction builds the new data file.
  static let compactionDirectoryName = ".compact-tmp"

  /// Removes the entries up to the newest snapshot at or before `seq` and rewrites
  /// the data file without free space. Use it while the app is stopped.
  ///
  /// The steps, each safe to interrupt (a killed compaction leaves the old log or the
  /// cut one, both valid; running it again finishes the job):
  /// 1. Take the writer lock (``LogError/locked(path:)`` if the app has the log open).
  /// 2. Pick the cut `C`, the newest intact snapshot at or before `seq`, and
  ///    ``verify(progress:)`` the whole log.
  /// 3. With ``CompactionDisposal/archive(_:)``, export entries up to `C` (with the
  ///    anchor they start from and their snapshots) to the archive, sync it and read it back.
  /// 4. In one write transaction, store the Merkle tree hashes that commit to the entries
  ///    about to go and that the remaining entries and the stored checkpoints need
  ///    (`docs/log-format.md` §9, *Compaction*), delete entries up to `C` and snapshots
  ///    before `C`, and set the anchor to `C` and the hash of entry `C`. Checkpoints are
  ///    never deleted.
  /// 5. Copy the environment compacted (`MDB_CP_COMPACT`) into a directory inside the
  ///    log's, sync it, remove `lock.mdb` (so that no process can pair the new file with
  ///    a reader table of the old one), `rename(2)` the new `data.mdb` over the old one,
  ///    and recreate `lock.mdb` for it: readers never run without LMDB's locking.
  ///
  /// A killed compaction may leave its work directory `.compact-tmp` inside the log (and
  /// `ARCHIVE.partial`): the next writer (an app, a compaction), holding the writer locks, so
  /// sure that no compaction runs, removes the first, the next compaction the second; `logtool info` reports them meanwhile (``leftovers(of:)``).
  ///
  /// - Throws: ``LogError``: ``LogError/noSnapshot(path:atOrBefore:)`` and
  ///   ``LogError/logHasProblems(path:report:)`` (nothing changed), ``TreeError/missingHash(path:reason:)``
  ///   when the log's tree cannot supply a hash the cut must keep (nothing changed), ``LogError/locked(path:)``,
  ///   ``LogError/notALog(path:reason:)`` and the other cases of opening a log,
  ///   ``LogError/destinationExists(path:reason:)`` and ``LogError/io(path:operation:reason:)``
  ///   (the archive could not be written).
  @discardableResult
  public static func compact(
    directory: URL, before seq: UInt64, disposal: CompactionDisposal,
    progress: ((CompactionStage, Int, Int) -> Void)? = nil
  ) throws -> CompactionReport {
    try compact(directory: directory, before: seq, disposal: disposal, keyRing: nil, progress: progress)
  }

  /// Compacts the log at `directory` as ``compact(directory:before:disposal:progress:)`` does; an
  /// encrypted log needs its key ring.
  ///
  /// Compaction of an encrypted log carries every record as stored: nothing is decrypted and
  /// re-sealed, so the chain, the tree, the log identifier and the checkpoints are unchanged, and
  /// the archive holds the removed entries' ciphertext (it verifies without the key). The ring is
  /// needed because the cut must leave a log that opens: the snapshot at the new anchor is the
  /// newest at or before `seq` that the ring *opens* (one sealed with a key the ring lacks is
  /// skipped, as a damaged one), and the undo, redo and restore entries after the newest snapshot
  /// are opened to check that none jumps across the cut. The removed entries need no key: after a
  /// key was removed from the ring (crypto-shredding), compaction removes the entries it sealed.
  ///
  /// ```swift
  /// let ring = try KeyRing(contentsOf: URL(fileURLWithPath: "ledger.keys"))
  /// try ActionLog.compact(directory: url, before: 10_000, disposal: .discard, keyRing: ring)
  /// ```
  ///
  /// - Parameters:
  ///   - directory: the log's directory.
  ///   - seq: cut at the newest snapshot at or before this sequence number (that the ring opens).
  ///   - disposal: what happens to the removed entries: an archive (their ciphertext) or nothing.
  ///   - keyRing: the key ring of an encrypted log; `nil` for a log in the clear.
  ///   - progress: called with the stage and (done, total) now and then.
  /// - Throws: as ``compact(directory:before:disposal:progress:)``; for an encrypted log without a
  ///   ring, ``LogError/encryptionMismatch(path:reason:)``, and when the ring opens no snapshot to
  ///   cut at, ``LogError/snapshotKeyMissing(path:seq:keyID:)`` or
  ///   ``LogError/snapshotDecryptionFailed(path:seq:keyID:)`` naming the newest one. Nothing changed.
  @discardableResult
  public static func compact(
    directory: URL, before seq: UInt64, disposal: CompactionDisposal, keyRing: KeyRing?,
    progress: ((CompactionStage, Int, Int) -> Void)? = nil
  ) throws -> CompactionReport {
    // A writer would create a log in an empty directory; compaction must find one.
    let directoryPath = directory.standardizedFileURL.path
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: directoryPath, isDirectory: &isDirectory), isDirectory.boolValue,
      !FileManager.default.fileExists(atPath: directoryPath + "/" + LogDirectory.dataFile)
    {
      throw LogError.notALog(path: directoryPath, reason: "it holds no \(LogDirectory.dataFile)")
    }
    let log: ActionLog
    do {
      log = try ActionLog(
        directory: directory, access: .readWrite,
        options: Options(durability: .full, flushInterval: nil, createIfMissing: false, keyRing: keyRing))
    } catch LogError.encryptionMismatch(let path, _) where keyRing == nil {
      throw LogError.encryptionMismatch(
        path: path,
        reason: "it is encrypted, and compaction needs its key ring to open the snapshot it cuts at "
          + "(logtool compact --key-file KEYS); nothing was changed")
    }
    defer { try? log.close() }
    let path = log.path
    // Opening the log for writing removed what a killed compaction left.
    let workPath = path + "/" + compactionDirectoryName
    let bytesBefore = try log.fileSize()

    let anchorBefore = try log.meta().anchor
    let (found, skipped) = try log.latestSnapshot(atOrBefore: seq)
    guard let snapshot = found, snapshot.seq >= anchorBefore.seq else {
      // An encrypted log whose ring opens none of them: name the newest snapshot and its key.
      if let keyError = skipped.first(where: \.isSnapshotKeyError) { throw keyError }
      throw LogError.noSnapshot(path: path, atOrBefore: seq)
    }
    let verification = try log.verify { progress?(.verifying, $0, $1) }
    guard verification.isValid else { throw LogError.logHasProblems(path: path, report: verification) }
    let cut = snapshot.seq
    if cut > anchorBefore.seq { try log.checkNoJumpAcross(cut: cut) }
    var anchorAfter = anchorBefore
    var report = CompactionReport(
      path: path, requested: seq, cut: cut, anchorBefore: anchorBefore, anchorAfter: anchorBefore, entriesRemoved: 0,
      snapshotsRemoved: 0, archive: nil, archiveReused: false, bytesBefore: bytesBefore, bytesAfter: bytesBefore)

    if cut > anchorBefore.seq {
      // The stored hash, read without opening the entry: its key may be gone (crypto-shredding).
      guard let hash = try log.storedHash(at: cut) else { throw LogError.noSuchEntry(path: path, seq: cut) }
      anchorAfter = ChainAnchor(seq: cut, hash: hash)
      // Before the archive: a tree that cannot supply what the cut must keep stops the compaction here.
      try log.checkTreeKeepsThrough(cut, from: anchorBefore.seq)
      if case .archive(let file) = disposal {
        let (archive, reused) = try log.writeArchive(
          to: file, from: anchorBefore, through: anchorAfter, progress: progress)
        report.archive = archive
        report.archiveReused = reused
      }
      progress?(.cutting, 0, 1)
      (report.entriesRemoved, report.snapshotsRemoved) = try log.cut(at: anchorAfter)
      progress?(.cutting, 1, 1)
    }
    report.anchorAfter = anchorAfter

    progress?(.rewriting, 0, 1)
    try log.rewriteCompacted(workPath: workPath)
    try log.close()
    progress?(.rewriting, 1, 1)
    let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + LogDirectory.dataFile)
    report.bytesAfter = (attributes?[.size] as? NSNumber)?.intValue ?? 0
    return report
  }

  /// The stored chain hash of entry `seq` (the last 32 bytes of its value), without parsing or
  /// opening the entry; `nil` when there is no such entry.
  func storedHash(at seq: UInt64) throws -> [UInt8]? {
    try storage {
      try environment.read { txn in
        try withSequenceKey(seq) { key in
          try txn.withValue(forKey: key, in: entriesDB) { value throws(LogError) -> [UInt8] in
            guard value.count >= EntryFormat.hashSize else {
              throw .corruptEntry(path: path, seq: seq, reason: "value of \(value.count) bytes holds no hash")
            }
            return Array(value[(value.count - EntryFormat.hashSize)...])
          }
        }
      }
    }
  }

  /// Throws ``LogError/jumpAcrossCut(path:seq:target:cut:)`` if an undo, redo or restore
  /// entry after the newest snapshot returns to the state after an entry before `cut`:
  /// opening the log replays that entry from the newest snapshot, and would need the state
  /// the cut removes. (Such jumps covered by a snapshot only make `state(at:)` of the entries
  /// between them and the snapshot say that history was compacted.)
  private func checkNoJumpAcross(cut: UInt64) throws {
    let newest = max(cut, try latestSnapshot().snapshot?.seq ?? cut)
    guard let last = try bounds()?.upperBound, last > newest else { return }
    try scan(in: (newest + 1)...last) { entry in
      guard entry.kind == .undo || entry.kind == .redo || entry.kind == .restore else { return }
      let target: UInt64
      do {
        target = try entry.codec.decode(JumpTargetPayload.self, from: Array(entry.payload)).target
      } catch {
        throw LogError.codec(codec: entry.codec, typeName: entry.typeName, underlying: error)
      }
      if target < cut { throw LogError.jumpAcrossCut(path: path, seq: entry.seq, target: target, cut: cut) }
    }
  }

  /// Throws ``TreeError/missingHash(path:reason:)`` when the tree cannot supply a hash a cut at
  /// `anchor` must keep (``TreeStorage/compactionHashes(_:entries:previousAnchor:anchor:path:)``).
  private func checkTreeKeepsThrough(_ anchor: UInt64, from previousAnchor: UInt64) throws {
    try treeStorage {
      try environment.read { txn in
        _ = try TreeStorage.compactionHashes(
          txn, entries: entriesDB, previousAnchor: previousAnchor, anchor: anchor, path: path)
      }
    }
  }

  /// Writes (or reuses) the archive of entries `(from.seq, through.seq]` and checks it reads back.
  private func writeArchive(
    to file: URL, from anchor: ChainAnchor, through head: ChainAnchor,
    progress: ((CompactionStage, Int, Int) -> Void)?
  ) throws -> (TransferReport, reused: Bool) {
    let archivePath = file.standardizedFileURL.path
    if FileManager.default.fileExists(atPath: archivePath) {
      let existing: TransferReport
      do { existing = try ActionLog.checkExport(at: file) } catch {
        throw LogError.destinationExists(
          path: archivePath, reason: "already exists and is not a valid archive: \(error)")
      }
      guard existing.meta.anchor == anchor, existing.head == head else {
        throw LogError.destinationExists(
          path: archivePath,
          reason: "already exists and is not the archive of this cut (entries \(anchor.seq + 1)…\(head.seq))")
      }
      return (existing, true)
    }
    progress?(.archiving, 0, Int(clamping: head.seq - anchor.seq))
    let written = try export(to: file, through: head.seq) { progress?(.archiving, $0, $1) }
    let readBack = try ActionLog.checkExport(at: file)
    guard readBack.head == head, readBack.meta.anchor == anchor, readBack.entries == written.entries else {
      throw LogError.invalidExport(
        path: archivePath, line: 0, seq: nil, reason: "the archive does not read back as written: nothing was removed")
    }
    return (readBack, false)
  }

  /// Deletes entries up to `anchor.seq` and snapshots before it and sets the anchor, in one transaction.
  private func cut(at anchor: ChainAnchor) throws(LogError) -> (entries: Int, snapshots: Int) {
    try storage {
      try environment.write { txn in
        var removed = (entries: 0, snapshots: 0)
        // The tree hashes below its stored level that the remaining entries and the stored checkpoints
        // need, over the entries about to go: stored while they are there (or nothing changes).
        let previous = try MetaRecord.decode(try MetaRecord.values(in: txn, db: metaDB), path: path).anchor.seq
        try TreeStorage.keepForCompaction(
          txn, entries: entriesDB, previousAnchor: previous, anchor: anchor.seq, path: path)
        try txn.withCursor(on: entriesDB) { cursor in
          var item = try cursor.first()
          while let (key, _) = item, try decodeKey(key) <= anchor.seq {
            try cursor.deleteCurrent()
            removed.entries += 1
            item = try cursor.next()
          }
        }
        try txn.withCursor(on: snapshotsDB) { cursor in
          var item = try cursor.first()
          while let (key, _) = item, try decodeKey(key) < anchor.seq {
            try cursor.deleteCurrent()
            removed.snapshots += 1
            item = try cursor.next()
          }
        }
        try MetaRecord.writeAnchor(anchor, in: txn, db: metaDB)
        return removed
      }
    }
  }

  /// Puts `newData` in place of `data.mdb` and gives the log a reader table (`lock.mdb`) that belongs to it.
  ///
  /// A reader table belongs to one data file: LMDB picks the meta page by the transaction id
  /// the table records, and the compacted copy starts again at a low transaction id. So the old
  /// `lock.mdb` is unlinked first (readers already open keep the old files, whole and unchanged),
  /// the new data file is renamed into place, and an environment opened on it creates a fresh
  /// `lock.mdb` initialised from the new file. If a process opened the log in between and paired
  /// a reader table with the old file, that table records the old transaction id: it is replaced
  /// again. A log is never left without `lock.mdb`, so no reader ever runs without LMDB's locking.
  func swapDataFile(_ newData: String) throws {
    let lockPath = path + "/" + LogDirectory.lockFile
    guard let expected = LogDirectory.lastTransactionID(ofDataFile: newData) else {
      throw LogError.io(path: newData, operation: "read", reason: "the compacted copy has no readable meta page")
    }
    for attempt in 0..<8 {
      if unlink(lockPath) != 0, errno != ENOENT {
        throw LogError.io(path: lockPath, operation: "remove", reason: String(cString: strerror(errno)))
      }
      if attempt == 0 { try DurableFile.rename(newData, to: path + "/" + LogDirectory.dataFile) }
      // A read transaction sees the transaction id the reader table records.
      let environment = try Environment(path: path, configuration: .init(maxDatabases: 4, flags: [.readOnly]))
      let recorded = try environment.read { $0.id }
      environment.close()
      if UInt64(recorded) == expected { return }
    }
    throw LogError.io(
      path: lockPath, operation: "recreate",
      reason: "processes keep opening the log during compaction; close them and run compact again")
  }

  /// Replaces `data.mdb` by a compacted copy; the caller holds the writer lock.
  private func rewriteCompacted(workPath: String) throws {
    guard mkdir(workPath, 0o700) == 0 else {
      throw LogError.io(path: workPath, operation: "create", reason: String(cString: strerror(errno)))
    }
    try storage { try environment.copy(to: workPath, compacting: true) }
    let newData = workPath + "/" + LogDirectory.dataFile
    chmod(newData, 0o600)
    try DurableFile.sync(newData)
    try swapDataFile(newData)
    rmdir(workPath)
  }
}

extension LogError {
  /// Whether this is a snapshot that did not open with the key ring (its key missing or not the one that sealed it).
  fileprivate var isSnapshotKeyError: Bool {
    switch self {
    case .snapshotKeyMissing, .snapshotDecryptionFailed: true
    default: false
    }
  }
}
