import Foundation
import ChronicleLMDB

extension ActionLog {
  /// Appends one entry and commits it (fsync'ed with `.full` durability).
  ///
  /// - Returns: the entry's sequence number.
  /// - Throws: ``LogError``; on any error nothing was written.
  @discardableResult
  public func append(_ entry: NewEntry) throws -> UInt64 {
    try append(contentsOf: CollectionOfOne(entry)).lowerBound
  }

  /// Appends `entries` in one transaction: all or none.
  ///
  /// - Returns: the sequence numbers they received.
  /// - Throws: ``LogError/invalidEntry(reason:)`` for an empty batch, an
  ///   entry that does not fit the format, or a restore, undo or redo entry
  ///   whose payload is not `{"target": seq}` naming an earlier entry (or 0);
  ///   or a storage error; on any error nothing was written.
  @discardableResult
  public func append(contentsOf entries: some Collection<NewEntry>) throws -> ClosedRange<UInt64> {
    try append(contentsOf: Array(entries))
  }

  /// Appends `entries` in one transaction: all or none (the array form, which needs no generic code).
  @discardableResult
  public func append(contentsOf entries: [NewEntry]) throws -> ClosedRange<UInt64> {
    guard !entries.isEmpty else { throw LogError.invalidEntry(reason: "an empty batch has no sequence numbers") }
    // `ensureWritable()`'s checks, under the lock the append takes anyway.
    return try state.withLock { state throws(LogError) -> ClosedRange<UInt64> in
      guard !state.isClosed else { throw .closed(path: path) }
      guard access == .readWrite else { throw .readOnly(path: path) }
      // Encode and hash everything before the transaction: a bad entry fails the batch before any write.
      let batch = try encode(entries, after: state.last, leaves: state.tree != nil)
      return try write(batch, state: &state)
    }
  }

  /// Encodes `entries` as this log would append them after `head` (sealed with its current key,
  /// for an encrypted log), and computes their chain hashes, without writing anything: the
  /// records a shared stream's device pushes to the server, which every device then appends
  /// verbatim with ``append(records:)``.
  ///
  /// - Throws: ``LogError/invalidEntry(reason:)`` for an entry that does not fit the format (or
  ///   an empty batch), ``LogError/closed(path:)``.
  public func records(encoding entries: [NewEntry], after head: ChainAnchor, device: String) throws -> [StreamRecord] {
    guard !entries.isEmpty else { throw LogError.invalidEntry(reason: "an empty batch has no sequence numbers") }
    try ensureOpen()
    let batch = try encode(entries, after: head, leaves: false)
    var start = 0
    return batch.ends.enumerated().map { offset, end in
      defer { start = end }
      return StreamRecord(
        seq: head.seq + 1 + UInt64(offset), body: Array(batch.values[start..<(end - EntryFormat.hashSize)]),
        hash: Array(batch.values[(end - EntryFormat.hashSize)..<end]), device: device)
    }
  }

  /// Appends entries encoded by another log with the same identifier (a shared stream's records,
  /// as the server orders them) byte for byte, in one transaction: all or none.
  ///
  /// Each record must be a well-formed entry, continue this log's head without a gap, and carry the
  /// chain hash of its bytes; so the log ends with the same head and Merkle root as every other
  /// copy that appended the same records.
  ///
  /// - Throws: ``LogError/invalidEntry(reason:)`` naming the first record out of place, malformed
  ///   or with a wrong hash; a storage error. Nothing is written then.
  @discardableResult
  public func append(records: [StreamRecord]) throws -> ClosedRange<UInt64> {
    guard !records.isEmpty else { throw LogError.invalidEntry(reason: "an empty batch has no sequence numbers") }
    return try state.withLock { state throws(LogError) -> ClosedRange<UInt64> in
      guard !state.isClosed else { throw .closed(path: path) }
      guard access == .readWrite else { throw .readOnly(path: path) }
      var batch = EncodedBatch(first: state.last.seq + 1)
      batch.values.reserveCapacity(records.reduce(0) { $0 + $1.body.count + EntryFormat.hashSize })
      for (offset, record) in records.enumerated() {
        let seq = batch.first + UInt64(offset)
        guard record.seq == seq else {
          throw .invalidEntry(reason: "record \(record.seq) does not continue the log at entry \(seq)")
        }
        guard record.hash.count == EntryFormat.hashSize else {
          throw .invalidEntry(reason: "record \(seq) has a hash of \(record.hash.count) bytes, not 32")
        }
        batch.values.append(contentsOf: record.body)
        batch.values.append(contentsOf: record.hash)
        batch.ends.append(batch.values.count)
        let start = batch.values.count - record.body.count - EntryFormat.hashSize
        let parsed = batch.values[start...].withUnsafeBytes { value in
          Result { try EntryView.parse(storedValue: value, seq: seq) }
        }
        if case .failure(let error) = parsed { throw .invalidEntry(reason: "record \(seq) is not an entry: \(error)") }
      }
      // The hashes are recomputed in place over the bytes received, then compared.
      let received = batch.values
      batch.leaves = computeHashes(&batch.values, ends: batch.ends, first: batch.first, previous: state.last.hash, leaves: state.tree != nil)
      if received != batch.values {
        let bad = zip(records, batch.ends).first { record, end in
          Array(batch.values[(end - EntryFormat.hashSize)..<end]) != record.hash
        }
        throw .invalidEntry(reason: "record \(bad?.0.seq ?? batch.first) does not carry the chain hash of its bytes after entry \(state.last.seq)")
      }
      return try write(batch, state: &state)
    }
  }

  /// Entries encoded for one transaction: the values one after another, each ending with its chain
  /// hash, and the Merkle leaves of those values when the log keeps a tree.
  struct EncodedBatch {
    /// The first entry's sequence number.
    var first: UInt64
    var values: [UInt8] = []
    /// Where each value ends in ``values``.
    var ends: [Int] = []
    var leaves: [MerkleDigest] = []
  }

  /// Encodes, seals (for an encrypted log) and hashes `entries` as the entries after `head`.
  func encode(_ entries: [NewEntry], after head: ChainAnchor, leaves: Bool) throws(LogError) -> EncodedBatch {
    let now = Date().microsecondsSince1970
    let first = head.seq + 1
    let overhead = cipher == nil ? 64 : 128  // a sealed entry's header and tag take 48 bytes more
    var values = ByteWriter(capacity: entries.reduce(0) { $0 + EntryFormat.fixedHeaderSize + $1.payload.count + overhead })
    var ends: [Int] = []
    ends.reserveCapacity(entries.count)
    // An encrypted log's entries are sealed in place once all are encoded.
    var pendingSeals: [RecordCipher.PendingSeal] = []
    pendingSeals.reserveCapacity(cipher == nil ? 0 : entries.count)
    let sealingKey = cipher?.ring?.current
    let sealsTypeNames = cipher?.ring?.sealsTypeNames ?? false
    // Each entry read in place: a copy of each would retain and release its fields.
    try entries.withUnsafeBufferPointer { entries throws(LogError) in
      for offset in entries.indices {
        if entries[offset].kind != .action && entries[offset].kind != .marker {
          try Self.checkJump(entries[offset], seq: first + UInt64(offset))
        }
        if let sealingKey {
          pendingSeals.append(
            try EntryFormat.encodeUnsealedBody(
              entries[offset], timestamp: entries[offset].timestamp ?? now, seq: first + UInt64(offset),
              key: sealingKey, sealsTypeName: sealsTypeNames, into: &values))
        } else {
          try EntryFormat.encodeBody(entries[offset], timestamp: entries[offset].timestamp ?? now, into: &values)
        }
        values.appendHashRoom()
        ends.append(values.bytes.count)
      }
    }
    var batch = EncodedBatch(first: first, values: values.bytes, ends: ends)
    if let cipher {
      try batch.values.withUnsafeMutableBytes { all in
        Result { () throws(LogError) in for record in pendingSeals { try cipher.seal(record, in: all) } }
      }.get()
    }
    batch.leaves = computeHashes(&batch.values, ends: ends, first: first, previous: head.hash, leaves: leaves)
    return batch
  }

  /// Writes each value's chain hash into its last 32 bytes; returns the values' Merkle leaves when `leaves`.
  private func computeHashes(
    _ values: inout [UInt8], ends: [Int], first: UInt64, previous: [UInt8], leaves: Bool
  ) -> [MerkleDigest] {
    values.withUnsafeMutableBytes { all in
      previous.withUnsafeBytes { previous in
        EntryHashes.compute(all, ends: ends, first: first, previous: previous, leaves: leaves)
      }
    }
  }

  /// Writes an encoded batch after the writer's head in one transaction, with the Merkle subtrees it
  /// completes, and moves the head. Called with the writer's state locked.
  private func write(_ batch: EncodedBatch, state: inout State) throws(LogError) -> ClosedRange<UInt64> {
    let first = batch.first
    var tree = state.tree
    try batch.values.withUnsafeBytes { all in
      Result { () throws(LogError) in
      try storage {
        try environment.write { txn in
          try checkHead(txn, last: first - 1, anchor: state.anchorSeq)
          // A transaction retried after the map grew starts again from the writer's tree.
          tree = state.tree
          var start = 0
          for (offset, end) in batch.ends.enumerated() {
            try withSequenceKey(first + UInt64(offset)) { key in
              try txn.put(UnsafeRawBufferPointer(rebasing: all[start..<end]), forKey: key, in: entriesDB, flags: .append)
            }
            start = end
          }
          // The Merkle tree's completed subtrees, in the same transaction.
          try TreeWriter.extend(&tree, txn: txn, first: first, leaves: batch.leaves)
        }
      }
      }
    }.get()
    state.tree = tree
    state.last = ChainAnchor(seq: first + UInt64(batch.ends.count - 1), hash: Array(batch.values.suffix(EntryFormat.hashSize)))
    readerWatch.afterCommit(bytes: batch.values.count, environment: environment)
    return first...state.last.seq
  }
}

extension ActionLog {
  /// Refuses to write unless the log still ends where this writer left it (entry `last`, or no
  /// entry when `last` is the `anchor`): a process that slipped past the writer locks (a deleted
  /// `chronicle.lock`, a hard link to `data.mdb`) must not be followed by a write that trusts the
  /// cached head. One cursor step inside the write transaction.
  func checkHead(_ txn: Transaction, last: UInt64, anchor: UInt64) throws(LogError) {
    let found = try storage {
      try txn.withCursor(on: entriesDB) { cursor in try cursor.last().map { try decodeKey($0.key) } }
    }
    guard found ?? anchor == last else {
      throw .changedByAnotherWriter(path: path, expectedLast: last, foundLast: found)
    }
  }
}
