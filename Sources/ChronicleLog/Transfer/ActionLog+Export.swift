import Foundation
import ChronicleLMDB

// MARK: - Export

extension ActionLog {
  /// The version of the export format (`"chronicleExport"` in an export's header line).
  ///
  /// Version 2 adds the log identifier, the tree hashes left of the anchor and the stored
  /// checkpoints (version 1 readers would refuse their lines); version 1 exports still import.
  /// An export of a log in the clear is written in this version; one of an encrypted log in
  /// ``encryptedExportFormatVersion``.
  public static let exportFormatVersion = 2

  /// The version of the export format of an encrypted log (format 2): version 2 plus entry lines
  /// that carry the stored ciphertext (`sealedBase64`), so the export verifies without the key
  /// and imports byte for byte. Versions that read only up to ``exportFormatVersion`` refuse it.
  public static let encryptedExportFormatVersion = 3

  /// Writes the log (or its entries up to `lastSeq`) as a Chronicle export: JSON Lines,
  /// lossless, re-importable byte for byte. `docs/logtool.md` specifies the format.
  ///
  /// The export carries what is needed to verify it against the log's checkpoints: the log
  /// identifier (so the imported log has the same origin), the Merkle tree hashes stored left
  /// of the anchor (those that commit to compacted entries), and every stored checkpoint whose
  /// tree the exported entries produce (size up to the last exported entry).
  ///
  /// The file appears complete or not at all: it is written beside `file` as
  /// `NAME.partial`, synced, and renamed into place. An existing `file` is never replaced.
  /// `NAME.partial` is created exclusively and never through a symbolic link; one left by
  /// a killed export (a regular file of this user, holding the start of an export or
  /// nothing, that no process is writing) is replaced, anything else there is refused.
  /// The export is a consistent picture of the log as it was when the export began, even
  /// while a writer appends, and it never holds a read transaction while its output is
  /// written: a slow or stalled consumer does not make the writer's file grow. Every entry's hash is checked
  /// on the way: a log that does not verify is not exported.
  ///
  /// An encrypted log is exported as stored: its entries' and snapshots' ciphertext, never
  /// decrypted, so the export needs no key, verifies without one and imports into the same
  /// encrypted log (same log identifier, which the records are bound to). `docs/logtool.md`,
  /// *The export format*, describes its sealed entry lines.
  ///
  /// - Parameters:
  ///   - file: the file to create.
  ///   - lastSeq: export entries up to this sequence number only (and the snapshots up to it); `nil` for all.
  ///   - progress: called now and then with (entries written, entries to write).
  /// - Throws: ``LogError``: ``LogError/destinationExists(path:reason:)`` and
  ///   ``LogError/io(path:operation:reason:)`` for file problems, the other cases for problems of the log.
  @discardableResult
  public func export(
    to file: URL, through lastSeq: UInt64? = nil, progress: ((Int, Int) -> Void)? = nil
  ) throws -> TransferReport {
    let path = file.standardizedFileURL.path
    if FileManager.default.fileExists(atPath: path) {
      throw LogError.destinationExists(path: path, reason: "already exists: an export never replaces a file")
    }
    let partial = path + ".partial"
    var output = try DurableFile(creatingExclusively: partial, staleIf: DurableFile.isExportStart)
    var report: TransferReport
    do {
      report = try export(through: lastSeq, progress: progress) { chunk in try output.write(chunk) }
      try output.syncAndClose()
      try DurableFile.publish(partial, as: path)
    } catch {
      output.close()
      unlink(partial)
      throw error
    }
    report.path = path
    return report
  }

  /// Streams the export to `write`, in chunks of about a mebibyte; otherwise as ``export(to:through:progress:)``.
  ///
  /// - Throws: ``LogError``, or what `write` threw, unchanged.
  @discardableResult
  public func export(
    through lastSeq: UInt64? = nil, progress: ((Int, Int) -> Void)? = nil, write: ([UInt8]) throws -> Void
  ) throws -> TransferReport {
    try ensureOpen()
    let meta = try meta()
    var writeError: (any Error)?
    func forward(_ chunk: [UInt8]) throws {
      do { try write(chunk) } catch {
        writeError = error
        throw error
      }
    }
    do {
      return try storage { try exportBody(meta: meta, through: lastSeq, progress: progress, write: forward) }
    } catch {
      if let writeError { throw writeError }
      throw error
    }
  }

  /// The export's body. The plan (header, tree hashes, the snapshots' and checkpoints' bytes) is
  /// read in one read transaction, then the entries in short ones that copy at most ``scanChunk``
  /// entries or about a mebibyte each, and every chunk is rendered and written after its
  /// transaction ended:
  /// an export whose consumer is slow or stalled never keeps the writer from reusing freed pages.
  /// Entries are immutable once written, so the chunks together are the picture the plan saw.
  private func exportBody(
    meta: LogMeta, through lastSeq: UInt64?, progress: ((Int, Int) -> Void)?, write: ([UInt8]) throws -> Void
  ) throws -> TransferReport {
    var out = JSONWriter()
    out.bytes.reserveCapacity(1 << 20 + 65_536)
    let (plan, snapshotValues) = try environment.read { txn in
      let anchorValue = try txn.get(forKey: Array(MetaKey.anchor.utf8), in: metaDB)
      guard anchorValue == MetaRecord.anchorValue(meta.anchor) else {
        throw LogError.corruptMeta(path: path, reason: "the anchor changed during the export (compacted meanwhile?)")
      }
      let plan = try exportPlan(txn, meta: meta, through: lastSeq)
      let values = try plan.snapshots.map { seq in
        try withSequenceKey(seq) { key in try txn.withValue(forKey: key, in: snapshotsDB) { Array($0) } }
      }
      return (plan, values)
    }
    ExportFormat.writeHeader(meta: meta, plan: plan, into: &out)
    for (node, hash) in plan.tree { ExportFormat.writeTree(node, hash: hash, into: &out) }
    var bytes = 0
    func flush() throws {
      bytes += out.bytes.count
      try write(out.bytes)
      out.bytes.removeAll(keepingCapacity: true)
    }
    var snapshotHashes: [UInt64: [UInt8]] = [:]
    if let range = plan.range {
      var previous = meta.anchor.hash
      var next = range.lowerBound
      while true {
        let done = try exportEntries(
          from: next, through: range.upperBound, meta: meta, snapshots: Set(plan.snapshots), previous: &previous,
          snapshotHashes: &snapshotHashes, into: &out)
        try flush()
        progress?(Int(clamping: done - range.lowerBound + 1), plan.entries)
        guard done < range.upperBound else { break }
        next = done + 1
      }
    }
    for (seq, value) in zip(plan.snapshots, snapshotValues) {
      guard let value else { continue }
      let snapshot: Snapshot
      do {
        // An encrypted snapshot is exported as stored: its checksum and chain hash check without the key.
        snapshot = try value.withUnsafeBytes { try SnapshotFormat.decode(seq: seq, value: $0, sealedAsEmpty: true) }
      } catch {
        throw LogError.corruptSnapshot(path: path, seq: seq, reason: "\(error)")
      }
      let expected = seq == meta.anchor.seq ? meta.anchor.hash : snapshotHashes[seq]
      guard snapshot.chainHash == expected else {
        throw LogError.corruptSnapshot(
          path: path, seq: seq, reason: "its chain hash differs from entry \(seq)'s hash")
      }
      ExportFormat.writeSnapshot(snapshot, value: value, into: &out)
    }
    for checkpoint in plan.checkpoints {
      ExportFormat.writeCheckpoint(size: checkpoint.size, note: checkpoint.note, into: &out)
    }
    try flush()
    progress?(plan.entries, plan.entries)
    return TransferReport(
      path: nil, meta: meta, range: plan.range, entries: plan.entries, snapshots: plan.snapshots, head: plan.head,
      bytes: bytes, logID: plan.logID, checkpoints: plan.checkpoints.map(\.size), treeHashes: plan.tree.count)
  }

  /// Writes the export lines of entries `first`… (up to `last`) into `out`, checking each entry's
  /// chain hash against `previous` (the hash before `first`, updated), until ``scanChunk`` entries
  /// or a mebibyte; returns the last entry written. The entries are copied in one read
  /// transaction and rendered after it ended.
  private func exportEntries(
    from first: UInt64, through last: UInt64, meta: LogMeta, snapshots: Set<UInt64>, previous: inout [UInt8],
    snapshotHashes: inout [UInt64: [UInt8]], into out: inout JSONWriter
  ) throws -> UInt64 {
    let encrypted = meta.formatVersion >= Self.encryptedFormatVersion
    let limit = last - first >= Self.scanChunk ? first + Self.scanChunk - 1 : last
    let chunk = try environment.read { txn in
      try txn.withCursor(on: entriesDB) { cursor in
        RawChunk(
          copying: cursor, from: .atLeast(withSequenceKey(first) { Array($0) }), limit: Int(limit - first + 1),
          byteLimit: 1 << 20)
      }
    }
    if let error = chunk.readError { throw error }
    var expected = first
    var computed = [UInt8](repeating: 0, count: 32)
    try chunk.forEach { key, value in
      let seq = try decodeKey(key)
      guard seq == expected else {
        throw LogError.corruptEntry(path: path, seq: expected, reason: "missing: the next entry found is \(seq)")
      }
      let view: EntryView
      do { view = try EntryFormat.parse(value, seq: seq) } catch {
        throw LogError.corruptEntry(path: path, seq: seq, reason: "\(error)")
      }
      previous.withUnsafeBytes { prev in
        computed.withUnsafeMutableBytes { Chain.hash(previous: prev, seq: seq, body: view.body, into: $0) }
      }
      guard computed.elementsEqual(view.hash) else {
        throw LogError.corruptEntry(
          path: path, seq: seq, reason: "hash mismatch: the log does not verify, so it is not exported")
      }
      guard (view.sealed != nil) == encrypted else {
        throw LogError.corruptEntry(
          path: path, seq: seq,
          reason: encrypted ? "stored in the clear (layout 1) in an encrypted log" : "encrypted (layout 2) in a log of format 1")
      }
      previous = computed
      if snapshots.contains(seq) { snapshotHashes[seq] = computed }
      do { try ExportFormat.writeEntry(seq: seq, view: view, into: &out) } catch {
        throw LogError.corruptEntry(path: path, seq: seq, reason: "\(error)")
      }
      expected = seq + 1
      return seq < limit
    }
    guard expected > first else {
      throw LogError.corruptEntry(path: path, seq: expected, reason: "missing: the log ends before it")
    }
    return expected - 1
  }

  /// Which entries and snapshots an export covers, read inside its transaction.
  private func exportPlan(_ txn: Transaction, meta: LogMeta, through lastSeq: UInt64?) throws -> ExportFormat.Plan {
    let upperLimit = lastSeq ?? .max
    let last: (seq: UInt64, hash: [UInt8])? = try txn.withCursor(on: entriesDB) { cursor in
      guard let (key, value) = try withSequenceKey(upperLimit, { try cursor.seek(atMost: $0) }) else { return nil }
      let seq = try decodeKey(key)
      guard seq <= upperLimit, seq > meta.anchor.seq else { return nil }
      guard value.count >= EntryFormat.hashSize else {
        throw LogError.corruptEntry(path: path, seq: seq, reason: "value of \(value.count) bytes holds no hash")
      }
      return (seq, Array(value.suffix(EntryFormat.hashSize)))
    }
    let range = last.map { (meta.anchor.seq + 1)...$0.seq }
    let snapshotLimit = last?.seq ?? meta.anchor.seq
    let snapshots: [UInt64] = try txn.withCursor(on: snapshotsDB) { cursor in
      var seqs: [UInt64] = []
      var item = try withSequenceKey(meta.anchor.seq) { try cursor.seek(atLeast: $0) }
      while let (key, _) = item {
        let seq = try decodeKey(key)
        guard seq <= snapshotLimit else { break }
        seqs.append(seq)
        item = try cursor.next()
      }
      return seqs
    }
    let head = last.map { ChainAnchor(seq: $0.seq, hash: $0.hash) } ?? meta.anchor
    var plan = ExportFormat.Plan(
      range: range, entries: range.map { Int(clamping: $0.upperBound - $0.lowerBound + 1) } ?? 0, snapshots: snapshots,
      head: head)
    plan.logID = try txn.get(forKey: Array(TreeStorage.logIDKey.utf8), in: metaDB)
    plan.tree = try TreeStorage.storedLeft(of: meta.anchor.seq, txn)
    plan.checkpoints = try exportedCheckpoints(txn, through: head.seq)
    return plan
  }

  /// The stored checkpoints of sizes up to `last`, by size (a partial export leaves out the larger ones).
  private func exportedCheckpoints(_ txn: Transaction, through last: UInt64) throws -> [(size: UInt64, note: [UInt8])] {
    guard let db = try? txn.openDatabase(named: TreeStorage.checkpointsName) else { return [] }
    return try txn.withCursor(on: db) { cursor in
      var found: [(size: UInt64, note: [UInt8])] = []
      var item = try cursor.first()
      while let (key, value) = item {
        let size = try sequence(fromKey: key)
        guard size <= last else { break }
        guard String(validating: value, as: UTF8.self) != nil else {
          throw LogError.corruptMeta(path: path, reason: "the stored checkpoint of size \(size) is not UTF-8 text")
        }
        found.append((size, Array(value)))
        item = try cursor.next()
      }
      return found
    }
  }
}
