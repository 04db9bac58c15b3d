import Foundation
import ChronicleLMDB

extension ActionLog {
  /// Checks the whole log: gapless sequence numbers from the anchor, every
  /// entry's header, every entry's chain hash, and every snapshot's checksum
  /// and tie to the chain.
  ///
  /// A changed byte anywhere in an entry makes its hash mismatch; removed,
  /// inserted or reordered entries break the sequence or the chain. Each
  /// entry is checked against the *stored* hash of its predecessor, so one
  /// changed entry is reported once, by its own sequence number.
  ///
  /// The check reads the head (the last entry) first, in the transaction that
  /// checks the snapshots: every entry from the anchor's successor to that head
  /// must be seen. The entries are read in short read transactions (entries
  /// never change once written), so a long check beside a writer does not make
  /// its file grow. A read error (a damaged page, `MDB_PAGE_NOTFOUND`, `MDB_CORRUPTED`)
  /// is a problem naming where the scan stopped, never the end of the data,
  /// and the entries it could not reach are reported as a range.
  ///
  /// Some damaged pages make LMDB abort or fault in the reading process instead
  /// of returning an error; `logtool verify` runs this check in a child process
  /// and reports such a crash as damage.
  ///
  /// - Parameter progress: called now and then with (entries checked, entries in the log).
  public func verify(progress: ((Int, Int) -> Void)? = nil) throws -> VerificationReport {
    let meta = try meta()
    var report = VerificationReport()
    /// The sequence number after `seq`; a log whose anchor is the largest one has none (it stays at the largest).
    func successor(_ seq: UInt64) -> UInt64 { seq == .max ? .max : seq + 1 }
    // The plan, in one read transaction: how many entries, the head this check must reach (the
    // last key), and the snapshots, each checked against the hash stored with its entry (the scan
    // below checks those hashes).
    var head: UInt64?
    var headUnreadable = false
    var total = 0
    var snapshotSeqs: [UInt64] = []
    var listFailed = false
    try storage {
      try environment.read { txn in
        total = try txn.statistics(of: entriesDB).entries
        do {
          head = try txn.withCursor(on: entriesDB) { try $0.last().map { try sequence(fromKey: $0.key) } }
        } catch {
          // The scan below still checks every entry it reaches, up to the end.
          report.add(.entry(successor(meta.anchor.seq)), "the last entry cannot be read: \(error)")
          headUnreadable = true
        }
        do {
          try listKeys(txn, snapshotsDB, into: &snapshotSeqs)
        } catch {
          report.add(.snapshot(snapshotSeqs.last.map { $0 &+ 1 } ?? 0), "the snapshot list cannot be read: \(error)")
          listFailed = true
          return
        }
        checkSnapshots(snapshotSeqs, meta: meta, txn, into: &report)
      }
    }
    // After a read error LMDB refuses the rest of the transaction: check the snapshots listed in a new one.
    if listFailed { try storage { try environment.read { checkSnapshots(snapshotSeqs, meta: meta, $0, into: &report) } } }
    // The entries, in read transactions of at most ``scanChunk`` entries each: a verify of a large
    // log beside a writer never keeps it from reusing freed pages for long.
    var scan = VerifyScan(previous: meta.anchor, encrypted: meta.formatVersion >= Self.encryptedFormatVersion)
    if head != nil || headUnreadable {
      while !scan.finished {
        let start: RawChunk.Start = scan.resumeKey.map { .after($0) } ?? .first
        let chunk = try storage {
          try environment.read { txn in
            try txn.withCursor(on: entriesDB) { RawChunk(copying: $0, from: start, limit: Int(Self.scanChunk)) }
          }
        }
        scan.check(chunk, through: head, into: &report)
        progress?(report.entriesChecked, total)
      }
    }
    let previous = scan.previous
    if let readError = scan.readError {
      report.add(.entry(successor(previous.seq)), "cannot be read (the scan stopped here): \(readError)")
    }
    // Gapless up to the head read at the start: a scan that ended early is a problem.
    if let head, previous.seq < head {
      report.add(
        .entry(successor(previous.seq)),
        "entries \(successor(previous.seq))…\(head) were not checked: the scan ended before the head (\(head))")
    }
    if report.isValid, head != nil, report.entriesChecked != total {
      report.add(
        .entry(successor(previous.seq)),
        "the log holds \(total) entries but \(report.entriesChecked) were found by the scan")
    }
    report.head = report.entriesChecked == 0 ? meta.anchor.hash : previous.hash
    progress?(report.entriesChecked, total)
    // The stored Merkle tree against intact entries (see `Tree/CheckpointVerification.swift`).
    if report.isValid { try checkTree(into: &report) }
    if report.isValid { try checkStoredCheckpoints(end: head ?? meta.anchor.seq, into: &report) }
    return report
  }

  /// The log's own signed checkpoints against its entries (without their signatures, which need the
  /// signer's key: `logtool verify --checkpoint` checks those): a checkpoint larger than the log
  /// means entries were removed from its end, and one whose root the entries do not reproduce
  /// means they were changed. A checkpoint whose root cannot be worked out (hashes a compaction did
  /// not keep) is left to `--checkpoint`, which says which are missing.
  private func checkStoredCheckpoints(end: UInt64, into report: inout VerificationReport) throws {
    let notes: [SignedNote]
    do { notes = try checkpoints() } catch {
      report.add(.entry(end &+ 1), "the stored checkpoints cannot be read: \(error)")
      return
    }
    for note in notes {
      guard let checkpoint = try? Checkpoint(parsing: note.text) else {
        report.add(.entry(end &+ 1), "a stored checkpoint is not a checkpoint note")
        continue
      }
      if checkpoint.size > end {
        report.add(
          .entry(end + 1),
          "the log stores its signed checkpoint of size \(checkpoint.size), but it ends at entry \(end): "
            + "entries \(end + 1)…\(checkpoint.size) were removed")
      } else if checkpoint.size > 0, let root = try? treeRoot(size: checkpoint.size), root != checkpoint.rootHash {
        report.add(
          .entry(checkpoint.size),
          "the entries do not reproduce the root of the log's stored checkpoint of size \(checkpoint.size)")
      }
    }
  }

  /// Checks each snapshot in `seqs`: its checksum, and its chain hash against the hash stored with
  /// its entry (or the anchor's).
  private func checkSnapshots(_ seqs: [UInt64], meta: LogMeta, _ txn: Transaction, into report: inout VerificationReport) {
    for seq in seqs {
      report.snapshotsChecked += 1
      let snapshot: Snapshot?
      let entryHash: [UInt8]?
      do {
        snapshot = try withSequenceKey(seq) { key in
          try txn.withValue(forKey: key, in: snapshotsDB) {
            try? SnapshotFormat.decode(seq: seq, value: $0, sealedAsEmpty: true)
          }
        } ?? nil
        entryHash =
          seq == meta.anchor.seq
          ? meta.anchor.hash
          : try withSequenceKey(seq) { key in
            try txn.withValue(forKey: key, in: entriesDB) {
              $0.count >= EntryFormat.hashSize ? Array($0.suffix(EntryFormat.hashSize)) : nil
            }
          } ?? nil
      } catch {
        report.add(.snapshot(seq), "cannot be read: \(error)")
        continue
      }
      guard let snapshot else {
        report.add(.snapshot(seq), "unreadable: its checksum or layout is wrong")
        continue
      }
      if let entryHash {
        if entryHash != snapshot.chainHash {
          report.add(.snapshot(seq), "its chain hash differs from entry \(seq)'s hash")
        }
      } else {
        report.add(.snapshot(seq), "the log holds no entry \(seq) for it to follow")
      }
    }
  }

  /// Appends the keys of `db` in order to `keys`; on a read error, throws with the keys read so far kept.
  private func listKeys(_ txn: Transaction, _ db: Database, into keys: inout [UInt64]) throws {
    try txn.withCursor(on: db) { cursor in
      var item = try cursor.first()
      while let (key, _) = item {
        keys.append(try decodeKey(key))
        item = try cursor.next()
      }
    }
  }
}

// MARK: - The chunked scan

/// Where ``ActionLog/verify(progress:)``'s scan of the entries is, between its read transactions.
private struct VerifyScan {
  /// The last entry checked (its stored hash), or the anchor.
  var previous: ChainAnchor
  /// The raw key of the last entry read, where the next transaction resumes; `nil` before the first.
  var resumeKey: [UInt8]?
  /// Whether the log's format says its entries are sealed (layout 2).
  let encrypted: Bool
  /// Set once the head was reached, the entries ran out or a read failed.
  var finished = false
  /// The read error that stopped the scan.
  var readError: (any Error)?
  private var computed = [UInt8](repeating: 0, count: 32)

  init(previous: ChainAnchor, encrypted: Bool) {
    self.previous = previous
    self.encrypted = encrypted
  }

  /// Checks the entries of `chunk` (copied after ``resumeKey``), stopping after `head` (`nil`: at the end).
  mutating func check(_ chunk: RawChunk, through head: UInt64?, into report: inout VerificationReport) {
    func successor(_ seq: UInt64) -> UInt64 { seq == .max ? .max : seq + 1 }
    resumeKey = chunk.lastKey ?? resumeKey
    if let error = chunk.readError { readError = error }
    finished = chunk.readError != nil || chunk.count < Int(ActionLog.scanChunk)
    chunk.forEach { key, value in
      check: do {
        guard key.count == 8, let seq = try? sequence(fromKey: key) else {
          report.add(.entry(successor(previous.seq)), "a key of \(key.count) bytes where an 8-byte seq belongs")
          break check
        }
        report.entriesChecked += 1
        if report.range == nil { report.range = seq...seq } else { report.range = report.range!.lowerBound...seq }
        if seq != successor(previous.seq) {
          report.add(
            .entry(successor(previous.seq)),
            seq > successor(previous.seq)
              ? "missing: the next entry found is \(seq)" : "out of order: \(seq) follows \(previous.seq)")
        }
        let view: EntryView
        do {
          view = try EntryFormat.parse(value, seq: seq)
        } catch {
          report.add(.entry(seq), "unreadable header: \(error)")
          previous = ChainAnchor(seq: seq, hash: value.count >= 32 ? Array(value.suffix(32)) : Chain.genesis)
          break check
        }
        previous.hash.withUnsafeBytes { prev in
          computed.withUnsafeMutableBytes { Chain.hash(previous: prev, seq: seq, body: view.body, into: $0) }
        }
        if !computed.elementsEqual(view.hash) {
          report.add(.entry(seq), "hash mismatch: the entry's bytes or its predecessor's hash were changed")
        }
        if (view.sealed != nil) != encrypted {
          report.add(
            .entry(seq),
            encrypted
              ? "stored in the clear (layout 1) in an encrypted log (format 2)"
              : "encrypted (layout 2) in a log in the clear (format 1)")
        }
        if view.kind != .action, view.kind != .marker, view.sealed == nil {
          // The engine refuses to open a log whose jump names no earlier entry.
          if let target = try? view.codec.decode(JumpTargetPayload.self, from: view.payload).target {
            if target >= seq {
              report.add(.entry(seq), "its \(view.kind) jumps to entry \(target), which is not before it")
            }
          } else {
            report.add(.entry(seq), "its \(view.kind) payload is not a {\"target\": seq}")
          }
        }
        previous = ChainAnchor(seq: seq, hash: Array(view.hash))
        if let head, seq >= head {
          finished = true
          return false
        }
      }
      return true
    }
  }
}

// MARK: - With the key

extension ActionLog {
  /// Opens every sealed entry and snapshot of an encrypted log with the key ring it was opened
  /// with, and reports each that does not open, by sequence number and key id: one whose key the
  /// ring does not hold (removed from the ring, or its key id changed) and one that does not
  /// decrypt (changed or moved). Nothing is reported for a log in the clear.
  ///
  /// Run it after ``verify(progress:)``, which checks the stored bytes without the key: this
  /// check reads entries `anchor + 1 …` up to the head in short read transactions.
  ///
  /// - Parameter progress: called now and then with (entries opened, entries to open).
  public func verifyDecryption(progress: ((Int, Int) -> Void)? = nil) throws -> VerificationReport {
    var report = VerificationReport()
    guard cipher != nil else { return report }
    let anchor = try meta().anchor.seq
    let head = try Self.readHead(environment, entriesDB, meta: try meta(), path: path).seq
    var next = anchor + 1
    while next <= head {
      let last = head - next >= Self.scanChunk ? next + Self.scanChunk - 1 : head
      try scanCopied(in: next...last) { view in
        report.entriesChecked += 1
        do { _ = try plaintext(of: view) } catch { report.add(.entry(view.seq), Self.sentence(error)) }
      }
      progress?(Int(clamping: last - anchor), Int(clamping: head - anchor))
      next = last + 1
    }
    for info in try snapshots() {
      report.snapshotsChecked += 1
      do { _ = try snapshot(at: info.seq) } catch { report.add(.snapshot(info.seq), Self.sentence(error)) }
    }
    return report
  }

  /// `error`'s sentence without the log's path, which a report names once.
  private static func sentence(_ error: any Error) -> String {
    switch error {
    case LogError.keyMissing(_, _, let keyID), LogError.snapshotKeyMissing(_, _, let keyID):
      "sealed with key \(EncryptionKey.text(keyID)), which the key file does not hold: the key was removed "
        + "from the ring, or the record's key id was changed"
    case LogError.decryptionFailed(_, _, let keyID), LogError.snapshotDecryptionFailed(_, _, let keyID):
      "does not decrypt with key \(EncryptionKey.text(keyID)): its ciphertext or header was changed or moved "
        + "from another position, or the key is not the one that sealed it"
    default:
      "\(error)"
    }
  }
}
