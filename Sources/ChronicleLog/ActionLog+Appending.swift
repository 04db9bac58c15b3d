import Foundation
import LMDB

extension ActionLog {
  /// Appends one entry and commits it (fsync'ed with `.full` durability).
  ///
  /// - Returns: the entry's sequence number.
  /// - Throws: ``LogError``; on any error nothing was written.
  @discardableResult
  public func append(_ entry: NewEntry) throws(LogError) -> UInt64 {
    try append(contentsOf: CollectionOfOne(entry)).lowerBound
  }

  /// Appends `entries` in one transaction: all or none.
  ///
  /// - Returns: the sequence numbers they received.
  /// - Throws: ``LogError/invalidEntry(reason:)`` for an empty batch or an
  ///   entry that does not fit the format, or a storage error; on any error
  ///   nothing was written.
  @discardableResult
  public func append(contentsOf entries: some Collection<NewEntry>) throws(LogError) -> ClosedRange<UInt64> {
    try append(contentsOf: Array(entries))
  }

  /// Appends `entries` in one transaction: all or none (the array form, which needs no generic code).
  @discardableResult
  public func append(contentsOf entries: [NewEntry]) throws(LogError) -> ClosedRange<UInt64> {
    guard !entries.isEmpty else { throw .invalidEntry(reason: "an empty batch has no sequence numbers") }
    try ensureWritable()
    return try state.withLock { state throws(LogError) -> ClosedRange<UInt64> in
      guard !state.isClosed else { throw .closed(path: path) }
      let now = Date().microsecondsSince1970
      // Encode and hash everything before the transaction: a bad entry fails the batch before any write.
      var values: [[UInt8]] = []
      values.reserveCapacity(entries.count)
      var last = state.last
      for entry in entries {
        var writer = ByteWriter(capacity: EntryFormat.fixedHeaderSize + entry.payload.count + 64)
        try EntryFormat.encodeBody(entry, timestamp: entry.timestamp ?? now, into: &writer)
        let seq = last.seq + 1
        let hash = writer.bytes.withUnsafeBytes { Chain.hash(previous: last.hash, seq: seq, body: $0) }
        writer.append(hash)
        values.append(writer.bytes)
        last = ChainAnchor(seq: seq, hash: hash)
      }
      let first = state.last.seq + 1
      try storage {
        try environment.write { txn in
          for (offset, value) in values.enumerated() {
            try withSequenceKey(first + UInt64(offset)) { key in
              try value.withUnsafeBytes { try txn.put($0, forKey: key, in: entriesDB, flags: .append) }
            }
          }
        }
      }
      state.last = last
      return first...last.seq
    }
  }
}
