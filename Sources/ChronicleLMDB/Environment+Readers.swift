import CChronicleLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - Reader table

extension Environment {
  /// One slot of LMDB's reader table (`mdb_reader_list`): a process that has or had a read
  /// transaction on the environment.
  ///
  /// A slot whose process is gone is *stale*. While a stale slot names a transaction, LMDB
  /// reuses no page freed after that transaction's snapshot, so every commit grows the file
  /// until ``Environment/readerCheck()`` clears the slot.
  public struct ReaderSlot: Sendable, Hashable {
    /// The process that owns the slot.
    public var pid: Int32
    /// The thread that owns the slot (an opaque number; with `MDB_NOTLS`, the last one that used it).
    public var thread: UInt64
    /// The transaction the slot reads (its snapshot), or `nil` when it reads none now.
    public var transactionID: Int?
    /// Whether the owning process runs (checked when the table was read; a zombie counts as gone).
    public var isProcessAlive: Bool

    /// Whether the slot is stale: its process is gone.
    public var isStale: Bool { !isProcessAlive }

    /// Creates a slot description.
    public init(pid: Int32, thread: UInt64, transactionID: Int?, isProcessAlive: Bool) {
      self.pid = pid
      self.thread = thread
      self.transactionID = transactionID
      self.isProcessAlive = isProcessAlive
    }
  }

  /// The slots of the reader table in use, live and stale, in table order.
  ///
  /// ```swift
  /// let stale = try env.readers().filter(\.isStale)
  /// if !stale.isEmpty { try env.readerCheck() }
  /// ```
  public func readers() throws -> [ReaderSlot] {
    try gate.shared { () throws(LMDBError) -> [ReaderSlot] in
      guard let handle else {
        throw LMDBError(
          code: .invalidArgument, message: "the environment is closed", operation: "listing readers of \(path)")
      }
      let sink = ReaderListSink()
      let context = Unmanaged.passUnretained(sink).toOpaque()
      let rc = withExtendedLifetime(sink) {
        mdb_reader_list(
          handle,
          { message, context in
            guard let message, let context else { return 0 }
            Unmanaged<ReaderListSink>.fromOpaque(context).takeUnretainedValue().lines.append(String(cString: message))
            return 0
          }, context)
      }
      // mdb_reader_list returns the callback's last result (always 0 here), or -1 for invalid arguments.
      try check(rc, "listing readers of \(path)")
      return sink.lines.compactMap(Self.parseReaderLine)
    }
  }

  /// Parses one line of `mdb_reader_list`: `"%10d %zx %llu"` or `"%10d %zx -"`; other lines
  /// (the header, "(no active readers)") give `nil`.
  package static func parseReaderLine(_ line: String) -> ReaderSlot? {
    let fields = line.split(whereSeparator: { $0 == " " || $0 == "\n" })
    guard fields.count == 3, let pid = Int32(fields[0]), let thread = UInt64(fields[1], radix: 16) else { return nil }
    let transactionID = fields[2] == "-" ? nil : Int(fields[2])
    return ReaderSlot(pid: pid, thread: thread, transactionID: transactionID, isProcessAlive: processExists(pid))
  }

  /// Whether a process with `pid` runs: `kill(pid, 0)` fails with `ESRCH` only for none; on
  /// Linux a zombie (dead, not yet reaped: its locks are gone, LMDB sees it dead) counts as gone.
  static func processExists(_ pid: Int32) -> Bool {
    guard pid > 0 else { return false }
    guard kill(pid, 0) == 0 || errno != ESRCH else { return false }
    #if os(Linux)
      return !isZombie(pid)
    #else
      return true
    #endif
  }

  #if os(Linux)
    /// Whether `/proc/PID/stat` gives the state `Z`: `PID (name) Z …`, the name possibly holding spaces.
    private static func isZombie(_ pid: Int32) -> Bool {
      guard let file = fopen("/proc/\(pid)/stat", "r") else { return false }
      defer { fclose(file) }
      var buffer = [UInt8](repeating: 0, count: 512)
      let count = fread(&buffer, 1, buffer.count, file)
      guard let close = buffer[..<count].lastIndex(of: UInt8(ascii: ")")), close + 2 < count else { return false }
      return buffer[close + 2] == UInt8(ascii: "Z")
    }
  #endif
}

/// Collects the lines `mdb_reader_list` reports; lives only for one call.
private final class ReaderListSink {
  var lines: [String] = []
}

// MARK: - Free pages

extension Environment {
  /// What LMDB's freelist holds: pages that commits freed and later commits may reuse,
  /// and how much of the file is in use.
  public struct FreeList: Sendable, Hashable {
    /// The page size in bytes.
    public var pageSize: Int
    /// Pages listed as free (reusable once no reader's snapshot predates their release).
    public var freePages: Int
    /// The freelist's records: one per transaction that freed pages not yet reused.
    public var records: Int
    /// The oldest transaction that freed pages still on the list, or `nil` for an empty list.
    public var oldestTransactionID: Int?
    /// Pages used so far: the file's high-water mark (last page number + 1).
    public var usedPages: Int
    /// The id of the last committed transaction.
    public var lastTransactionID: Int

    /// Creates a description.
    public init(
      pageSize: Int, freePages: Int, records: Int, oldestTransactionID: Int?, usedPages: Int, lastTransactionID: Int
    ) {
      self.pageSize = pageSize
      self.freePages = freePages
      self.records = records
      self.oldestTransactionID = oldestTransactionID
      self.usedPages = usedPages
      self.lastTransactionID = lastTransactionID
    }
  }

  /// Reads the freelist (LMDB's free database, as `mdb_stat -f` does) in one read transaction.
  public func freeList() throws -> FreeList {
    let info = try info()
    return try read { txn in
      var stat = MDB_stat()
      try check(mdb_stat(txn.handle, 0, &stat), "stat of the freelist of \(path)")
      var cursor: OpaquePointer?
      try check(mdb_cursor_open(txn.handle, 0, &cursor), "opening a cursor on the freelist of \(path)")
      defer { mdb_cursor_close(cursor) }
      var key = MDB_val()
      var value = MDB_val()
      var pages = 0
      var records = 0
      var oldest: Int?
      var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
      while rc == MDB_SUCCESS {
        records += 1
        // Each value is an ID list: a count (size_t) followed by that many page numbers.
        if value.mv_size >= MemoryLayout<Int>.size, let data = value.mv_data {
          pages += data.loadUnaligned(as: Int.self)
        }
        if oldest == nil, key.mv_size >= MemoryLayout<Int>.size, let data = key.mv_data {
          oldest = data.loadUnaligned(as: Int.self)
        }
        rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
      }
      if rc != MDB_NOTFOUND { try check(rc, "reading the freelist of \(path)") }
      return FreeList(
        pageSize: Int(stat.ms_psize), freePages: pages, records: records, oldestTransactionID: oldest,
        usedPages: info.lastPageNumber + 1, lastTransactionID: info.lastTransactionID)
    }
  }
}

// MARK: - Process

extension Environment {
  /// The calling process's id, as the reader table records it.
  public static var currentProcessID: Int32 { Int32(getpid()) }
}
