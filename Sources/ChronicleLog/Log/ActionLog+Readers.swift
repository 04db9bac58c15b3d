import ChronicleLMDB
import Synchronization

// MARK: - Stale readers

extension ActionLog {
  /// How many stale reader slots this writer has cleared since it opened the log (at the
  /// open and while appending); always 0 for a read-only instance.
  ///
  /// A process that dies inside a read transaction (killed, or `logtool list | head`
  /// on an old `logtool`) leaves its slot in LMDB's reader table. Until the slot is
  /// cleared, no page freed after that reader's snapshot is reused, so every commit
  /// grows `data.mdb`. The writer clears such slots at the open and then every
  /// ``ReaderCheckPolicy/commits`` commits, ``ReaderCheckPolicy/bytes`` appended bytes or
  /// ``ReaderCheckPolicy/interval`` (whichever comes first), so a dead reader costs a
  /// bounded amount of growth (see `docs/reliability.md`).
  public var staleReadersCleared: Int { readerWatch.cleared }

  /// Called (on the appending thread, after the commit) with the number of stale reader
  /// slots a check just cleared; `nil` for no handler. Keep it short: it runs inside `append`.
  ///
  /// ```swift
  /// log.staleReaderHandler = { cleared in print("cleared \(cleared) stale LMDB reader slot(s)") }
  /// ```
  public var staleReaderHandler: (@Sendable (_ cleared: Int) -> Void)? {
    get { readerWatch.handler }
    set { readerWatch.handler = newValue }
  }

  /// Clears the reader slots of processes that died now (`mdb_reader_check`) and returns
  /// how many there were; a writer does this by itself while it appends.
  ///
  /// - Throws: ``LogError/readOnly(path:)`` for a read-only instance (it never writes,
  ///   not even to the reader table), or a storage error.
  @discardableResult
  public func clearStaleReaders() throws -> Int {
    try ensureWritable()
    let cleared = try storage { try environment.readerCheck() }
    readerWatch.record(cleared: cleared)
    return cleared
  }

  /// The reader table and the freelist: what an operator looks at when `data.mdb` grows.
  ///
  /// ```swift
  /// let status = try log.storageStatus()
  /// for reader in status.readers where reader.isStale { print("dead reader", reader.pid) }
  /// print(status.freePages, "of", status.usedPages, "pages free")
  /// ```
  public func storageStatus() throws -> StorageStatus {
    try ensureOpen()
    return try storage {
      let info = try environment.info()
      let slots = try environment.readers()
      let free = try environment.freeList()
      let ownPID = Environment.currentProcessID
      return StorageStatus(
        readers: slots.map { slot in
          StorageStatus.Reader(
            pid: slot.pid, transactionID: slot.transactionID, isStale: slot.isStale, isThisProcess: slot.pid == ownPID,
            transactionsBehind: slot.transactionID.map { max(0, free.lastTransactionID - $0) })
        },
        hasReaderTable: info.maxReaders > 0 && !(access == .readOnly && environment.configuration.flags.contains(.noLock)),
        maxReaders: info.maxReaders, lastTransactionID: free.lastTransactionID, pageSize: free.pageSize,
        usedPages: free.usedPages, freePages: free.freePages, mapSize: info.mapSize, fileSize: try fileSize())
    }
  }
}
