import ChronicleLog

// MARK: - Stale readers

extension Store {
  /// How many stale LMDB reader slots the store's log has cleared since it opened.
  ///
  /// A process that dies inside a read transaction of this log (a killed `logtool`,
  /// another app's reader) leaves a slot that keeps the writer from reusing pages, so
  /// `data.mdb` would grow with every commit. The store's log clears such slots when it
  /// opens and then every few commits while it appends (see `docs/reliability.md`).
  public var staleReadersCleared: Int { log.staleReadersCleared }

  /// The log's reader table and free pages (what `logtool info` shows).
  ///
  /// ```swift
  /// let status = try store.storageStatus()
  /// print(status.staleReaders.count, "stale readers;", status.freePages, "free pages")
  /// ```
  public func storageStatus() throws -> StorageStatus {
    do { return try log.storageStatus() } catch { throw ChronicleError(error) }
  }
}
