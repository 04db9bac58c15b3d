import Foundation
import LMDB

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
  /// The check runs in one read transaction and reads the head (the last
  /// entry) first: every entry from the anchor's successor to that head must
  /// be seen. A read error (a damaged page, `MDB_PAGE_NOTFOUND`, `MDB_CORRUPTED`)
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
    var entryHashes: [UInt64: [UInt8]] = [:]
    var snapshotSeqs: [UInt64] = []
    var scanFailed = false
    /// The sequence number after `seq`; a log whose anchor is the largest one has none (it stays at the largest).
    func successor(_ seq: UInt64) -> UInt64 { seq == .max ? .max : seq + 1 }
    /// Checks each listed snapshot's checksum and its tie to the chain.
    func checkSnapshots(_ txn: Transaction) {
      for seq in snapshotSeqs {
        report.snapshotsChecked += 1
        let snapshot: Snapshot?
        do {
          snapshot = try withSequenceKey(seq) { key in
            try txn.withValue(forKey: key, in: snapshotsDB) {
              try? SnapshotFormat.decode(seq: seq, value: $0, sealedAsEmpty: true)
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
        let expected = seq == meta.anchor.seq ? meta.anchor.hash : entryHashes[seq]
        if let expected {
          if expected != snapshot.chainHash {
            report.add(.snapshot(seq), "its chain hash differs from entry \(seq)'s hash")
          }
        } else {
          report.add(.snapshot(seq), "the log holds no entry \(seq) for it to follow")
        }
      }
    }
    try storage {
      try environment.read { txn in
        let total = try txn.statistics(of: entriesDB).entries
        do {
          try listKeys(txn, snapshotsDB, into: &snapshotSeqs)
        } catch {
          report.add(.snapshot(snapshotSeqs.last.map { $0 &+ 1 } ?? 0), "the snapshot list cannot be read: \(error)")
          scanFailed = true
        }
        let snapshotSet = Set(snapshotSeqs)
        try txn.withCursor(on: entriesDB) { cursor in
          var previous = meta.anchor
          // The head this check must reach: the last key, read before the scan.
          let head: UInt64?
          do {
            head = try cursor.last().map { try sequence(fromKey: $0.key) }
          } catch {
            report.add(.entry(successor(previous.seq)), "the last entry cannot be read: \(error)")
            scanFailed = true
            head = nil
          }
          var item: Cursor.Item?
          var readError: (any Error)?
          do { item = try cursor.first() } catch { readError = error }
          var computed = [UInt8](repeating: 0, count: 32)
          while let (key, value) = item {
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
              previous = ChainAnchor(seq: seq, hash: Array(view.hash))
              if snapshotSet.contains(seq) { entryHashes[seq] = previous.hash }
              if report.entriesChecked % 65_536 == 0 { progress?(report.entriesChecked, total) }
            }
            do { item = try cursor.next() } catch {
              readError = error
              item = nil
            }
          }
          if let readError {
            scanFailed = true
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
          report.head = previous.hash
        }
        progress?(report.entriesChecked, total)
        if !scanFailed { checkSnapshots(txn) }
      }
    }
    // After a read error LMDB refuses the rest of the transaction: check the snapshots in a new one.
    if scanFailed { try storage { try environment.read { txn in checkSnapshots(txn) } } }
    if report.entriesChecked == 0 { report.head = meta.anchor.hash }
    // The stored Merkle tree against intact entries (see `Tree/CheckpointVerification.swift`).
    if report.isValid { try checkTree(into: &report) }
    return report
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
