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
      let now = Date().microsecondsSince1970
      // Encode and hash everything before the transaction: a bad entry fails the batch before any write.
      // The values go one after another into one buffer, each ending with its chain hash.
      let overhead = cipher == nil ? 64 : 128  // a sealed entry's header and tag take 48 bytes more
      var values = ByteWriter(capacity: entries.reduce(0) { $0 + EntryFormat.fixedHeaderSize + $1.payload.count + overhead })
      var ends: [Int] = []
      ends.reserveCapacity(entries.count)
      let first = state.last.seq + 1
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
      var tree = state.tree
      let written = values.bytes.withUnsafeMutableBytes { all in
        Result { () throws(LogError) in
          // The leaves are hashed with the chain, and the subtrees they complete stored in the
          // transaction after the entries.
          if let cipher { for record in pendingSeals { try cipher.seal(record, in: all) } }
          let leaves = state.last.hash.withUnsafeBytes { previous in
            EntryHashes.compute(all, ends: ends, first: first, previous: previous, leaves: state.tree != nil)
          }
          try storage {
            try environment.write { txn in
              try checkHead(txn, last: first - 1, anchor: state.anchorSeq)
              // A transaction retried after the map grew starts again from the writer's tree.
              tree = state.tree
              var start = 0
              for (offset, end) in ends.enumerated() {
                try withSequenceKey(first + UInt64(offset)) { key in
                  try txn.put(UnsafeRawBufferPointer(rebasing: all[start..<end]), forKey: key, in: entriesDB, flags: .append)
                }
                start = end
              }
              // The Merkle tree's completed subtrees, in the same transaction.
              try TreeWriter.extend(&tree, txn: txn, first: first, leaves: leaves)
            }
          }
        }
      }
      try written.get()
      state.tree = tree
      state.last = ChainAnchor(seq: first + UInt64(entries.count - 1), hash: Array(values.bytes.suffix(EntryFormat.hashSize)))
      readerWatch.afterCommit(bytes: values.bytes.count, environment: environment)
      return first...state.last.seq
    }
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
