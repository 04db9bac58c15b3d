import CChronicleLMDB

/// An LMDB environment: one memory-mapped file (`data.mdb`, with `lock.mdb`
/// beside it) holding any number of named databases.
///
/// All access goes through closures, so a transaction can never outlive its
/// scope or cross an `await`: LMDB requires a write transaction to begin and
/// commit on one thread, and this shape makes that the only thing you can do.
///
/// ```swift
/// let env = try Environment(path: dir, configuration: .init(mapSize: 64 << 20, maxDatabases: 4))
/// let db = try env.openDatabase(named: "entries", create: true)
/// try env.write { txn in try txn.put([1, 2, 3], forKey: [0, 0, 0, 1], in: db) }
/// let value = try env.read { txn in try txn.get(forKey: [0, 0, 0, 1], in: db) }
/// ```
///
/// An environment opened with ``Flags/noLock`` has no reader table: give it a ``ReaderGate``
/// to coordinate its read transactions with writers by other means.
///
/// When a write transaction fails with `MDB_MAP_FULL`, ``write(_:)`` aborts it,
/// doubles the map (up to ``Configuration/maxMapSize``) and runs the closure
/// again from the start, so write closures must be safe to repeat. When another
/// process has grown the map, beginning a transaction adopts the new size.
///
/// Open each path once per process: LMDB's locks are per file descriptor, and
/// closing a second environment on the same files would drop the first one's.
/// ``shared(path:configuration:readerGate:)`` keeps that rule: it hands every caller in the
/// process the one environment of those files, closed by the last ``releaseShared()``.
public final class Environment: @unchecked Sendable {
  // Sound: `MDB_env` is thread-safe for beginning transactions when opened
  // with MDB_NOTLS (always set here); transactions never escape the closures
  // that create them. The only mutable Swift state (`handle` being cleared on
  // close, map resizes) changes under `gate` held exclusively, while every
  // transaction holds it shared.

  /// Flags for opening an environment (a subset of LMDB's `mdb_env_open` flags).
  public struct Flags: OptionSet, Sendable, Hashable {
    /// The raw C flags.
    public var rawValue: UInt32
    /// Wraps raw C flags.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `MDB_RDONLY`: open read-only; no write transactions.
    public static let readOnly = Flags(rawValue: UInt32(MDB_RDONLY))
    /// `MDB_NOSYNC`: commits do not fsync. Survives a process crash, not a power loss; call ``Environment/sync(force:)``.
    public static let noSync = Flags(rawValue: UInt32(MDB_NOSYNC))
    /// `MDB_NOLOCK`: no locking at all; the caller guarantees a single user.
    public static let noLock = Flags(rawValue: UInt32(MDB_NOLOCK))
    /// `MDB_NORDAHEAD`: no read-ahead (for databases larger than RAM).
    public static let noReadAhead = Flags(rawValue: UInt32(MDB_NORDAHEAD))
    /// `MDB_NOSUBDIR`: `path` names the data file itself, not a directory.
    public static let noSubdirectory = Flags(rawValue: UInt32(MDB_NOSUBDIR))
  }

  /// How to open an environment.
  public struct Configuration: Sendable, Hashable {
    /// The initial map size in bytes. LMDB's default is 1 MiB; this one is 16 MiB.
    public var mapSize: Int
    /// The largest map size automatic growth may reach, in bytes.
    public var maxMapSize: Int
    /// The number of named databases the environment may hold.
    public var maxDatabases: Int
    /// The number of concurrent read transactions (across all processes).
    public var maxReaders: Int
    /// Open flags. `MDB_NOTLS` is always added.
    public var flags: Flags
    /// The permissions of files LMDB creates.
    public var fileMode: UInt32

    /// Creates a configuration.
    public init(
      mapSize: Int = 16 << 20,
      maxMapSize: Int = 1 << 40,
      maxDatabases: Int = 8,
      maxReaders: Int = 126,
      flags: Flags = [],
      fileMode: UInt32 = 0o600
    ) {
      self.mapSize = mapSize
      self.maxMapSize = maxMapSize
      self.maxDatabases = maxDatabases
      self.maxReaders = maxReaders
      self.flags = flags
      self.fileMode = fileMode
    }
  }

  /// The path the environment was opened at.
  public let path: String
  /// The configuration it was opened with.
  public let configuration: Configuration

  /// Entered before and left after every read transaction (see ``ReaderGate``); `nil` for none.
  let readerGate: (any ReaderGate)?

  /// The C handle; `nil` once closed. Read under `gate` (shared), cleared under it (exclusive).
  var handle: OpaquePointer?
  let gate = ResizeGate()

  /// Opens (creating the files if needed, unless read-only) the environment at `path`.
  ///
  /// - Parameters:
  ///   - path: the environment's directory (or, with ``Flags/noSubdirectory``, its data file).
  ///   - configuration: the map size, databases, readers and flags.
  ///   - readerGate: entered before every read transaction and left after it; `nil` for none.
  /// - Throws: `LMDBError` naming `path`, e.g. `.invalid` for a file that is not LMDB,
  ///   `.noSuchFile` for a missing directory, `.permissionDenied`.
  public init(path: String, configuration: Configuration = Configuration(), readerGate: (any ReaderGate)? = nil) throws
  {
    self.path = path
    self.configuration = configuration
    self.readerGate = readerGate
    var env: OpaquePointer?
    try check(mdb_env_create(&env), "creating an environment for \(path)")
    do {
      try check(mdb_env_set_mapsize(env, configuration.mapSize), "setting the map size of \(path)")
      try check(mdb_env_set_maxdbs(env, MDB_dbi(configuration.maxDatabases)), "setting maxdbs of \(path)")
      try check(
        mdb_env_set_maxreaders(env, UInt32(configuration.maxReaders)), "setting maxreaders of \(path)")
      let flags = configuration.flags.rawValue | UInt32(MDB_NOTLS)
      try check(
        mdb_env_open(env, path, flags, mdb_mode_t(configuration.fileMode)), "opening the environment at \(path)")
    } catch {
      mdb_env_close(env)
      throw error
    }
    handle = env
  }

  deinit {
    if let handle { mdb_env_close(handle) }
  }

  /// Whether the environment was opened read-only.
  public var isReadOnly: Bool { configuration.flags.contains(.readOnly) }

  /// Closes the environment, waiting for open transactions to end. Later calls throw `.invalidArgument`.
  public func close() {
    gate.exclusive {
      if let handle { mdb_env_close(handle) }
      handle = nil
    }
  }

  // MARK: - Transactions

  /// Runs `body` in a read-only transaction and ends it before returning.
  ///
  /// The transaction sees the state committed when it began, by this or any
  /// other process. Values it hands out are valid only inside `body`.
  public func read<R>(_ body: (Transaction) throws -> R) throws -> R {
    if let readerGate {
      try readerGate.enter()
      defer { readerGate.leave() }
      return try readUngated(body)
    }
    return try readUngated(body)
  }

  private func readUngated<R>(_ body: (Transaction) throws -> R) throws -> R {
    try withTransaction(readOnly: true) { txn in
      defer { txn.abort() }
      return try body(txn)
    }
  }

  /// Runs `body` in a write transaction and commits it; if `body` throws, the
  /// transaction is aborted and nothing it did is kept.
  ///
  /// On `MDB_MAP_FULL` (from any operation in `body` or from the commit) the
  /// transaction is aborted, the map is doubled up to
  /// ``Configuration/maxMapSize``, and `body` runs again from the start.
  public func write<R>(_ body: (Transaction) throws -> R) throws -> R {
    while true {
      var hitMapFull = false
      var mapSizeAtFailure = 0
      do {
        return try withTransaction(readOnly: false) { txn in
          do {
            let result = try body(txn)
            try txn.commit()
            return result
          } catch {
            txn.abort()
            hitMapFull = txn.sawMapFull
            if hitMapFull { mapSizeAtFailure = currentMapSize() }
            throw error
          }
        }
      } catch {
        guard hitMapFull else { throw error }
        try grow(from: mapSizeAtFailure)
      }
    }
  }

  private func withTransaction<R>(readOnly: Bool, _ body: (Transaction) throws -> R) throws -> R {
    while true {
      var resized = false
      let result: R? = try gate.shared {
        guard let handle else {
          throw LMDBError(
            code: .invalidArgument, message: "the environment is closed", operation: "beginning a transaction on \(path)")
        }
        var txn: OpaquePointer?
        let rc = mdb_txn_begin(handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        if rc == MDB_MAP_RESIZED {
          resized = true
          return nil
        }
        try check(rc, "beginning a \(readOnly ? "read" : "write") transaction on \(path)")
        return try body(Transaction(txn!, environment: self, readOnly: readOnly))
      }
      if let result { return result }
      if resized {
        // Another process grew the map: adopt its size (needs no transaction open here).
        try gate.exclusive { () throws(LMDBError) in
          guard let handle else { return }
          try check(mdb_env_set_mapsize(handle, 0), "adopting a grown map size for \(path)")
        }
      }
    }
  }

  // MARK: - Map size

  /// The current map size in bytes.
  public var mapSize: Int { gate.shared { currentMapSize() } }

  private func currentMapSize() -> Int {
    guard let handle else { return 0 }
    var info = MDB_envinfo()
    mdb_env_info(handle, &info)
    return info.me_mapsize
  }

  private func grow(from size: Int) throws(LMDBError) {
    try gate.exclusive { () throws(LMDBError) in
      guard let handle else { return }
      let current = currentMapSize()
      guard current == size else { return }  // someone else grew it meanwhile
      let ceiling = configuration.maxMapSize
      guard current < ceiling else {
        throw LMDBError(
          code: .mapFull,
          message: "the map is full at \(current) bytes, the ceiling it may grow to (\(ceiling)); raise the ceiling (a log's maxLogSize) to write more",
          operation: "writing to \(path)")
      }
      let next = min(current * 2, ceiling)
      try check(mdb_env_set_mapsize(handle, next), "growing the map of \(path) to \(next) bytes")
    }
  }

  // MARK: - Databases

  /// Opens the named database (or the unnamed main one for `nil`), creating it if asked.
  ///
  /// Open each database once and keep the handle: it is valid for the
  /// environment's life. The open happens in its own committed transaction.
  public func openDatabase(named name: String?, create: Bool = false) throws -> Database {
    if isReadOnly || !create {
      // A read transaction's dbi survives if the transaction is committed, not aborted.
      return try withTransaction(readOnly: true) { txn in
        let db = try txn.openDatabase(named: name)
        try txn.commit()
        return db
      }
    }
    return try write { txn in try txn.openDatabase(named: name, create: true) }
  }

  // MARK: - Maintenance

  /// Flushes buffers to disk (`mdb_env_sync`). With `force`, syncs even when opened with `.noSync`.
  public func sync(force: Bool = true) throws {
    try gate.shared { () throws(LMDBError) in
      guard let handle else { return }
      try check(mdb_env_sync(handle, force ? 1 : 0), "syncing \(path)")
    }
  }

  /// Copies the environment to the directory `destination` (which must exist and be empty).
  ///
  /// With `compacting`, free pages are omitted and pages renumbered (`MDB_CP_COMPACT`),
  /// so the copy is as small as the live data.
  public func copy(to destination: String, compacting: Bool) throws {
    try gate.shared { () throws(LMDBError) in
      guard let handle else {
        throw LMDBError(code: .invalidArgument, message: "the environment is closed", operation: "copying \(path)")
      }
      try check(
        mdb_env_copy2(handle, destination, compacting ? UInt32(MDB_CP_COMPACT) : 0),
        "copying \(path) to \(destination)")
    }
  }

  /// Clears reader slots left by processes that died (`mdb_reader_check`); returns how many.
  @discardableResult
  public func readerCheck() throws -> Int {
    try gate.shared { () throws(LMDBError) -> Int in
      guard let handle else { return 0 }
      var dead: Int32 = 0
      try check(mdb_reader_check(handle, &dead), "checking reader slots of \(path)")
      return Int(dead)
    }
  }

  /// Statistics of the main database (page size, depth, page counts).
  public func statistics() throws -> Statistics {
    try gate.shared { () throws(LMDBError) -> Statistics in
      guard let handle else {
        throw LMDBError(code: .invalidArgument, message: "the environment is closed", operation: "stat of \(path)")
      }
      var stat = MDB_stat()
      try check(mdb_env_stat(handle, &stat), "stat of \(path)")
      return Statistics(stat)
    }
  }

  /// Map size, last page, last transaction id and reader counts.
  public func info() throws -> Info {
    try gate.shared { () throws(LMDBError) -> Info in
      guard let handle else {
        throw LMDBError(code: .invalidArgument, message: "the environment is closed", operation: "info of \(path)")
      }
      var info = MDB_envinfo()
      try check(mdb_env_info(handle, &info), "info of \(path)")
      return Info(
        mapSize: info.me_mapsize, lastPageNumber: info.me_last_pgno,
        lastTransactionID: info.me_last_txnid, maxReaders: Int(info.me_maxreaders),
        readersInUse: Int(info.me_numreaders))
    }
  }

  /// What `mdb_env_info` reports.
  public struct Info: Sendable, Hashable {
    /// The map size in bytes.
    public var mapSize: Int
    /// The number of the last used page.
    public var lastPageNumber: Int
    /// The id of the last committed transaction.
    public var lastTransactionID: Int
    /// The size of the reader table.
    public var maxReaders: Int
    /// Reader slots in use.
    public var readersInUse: Int
  }
}

// MARK: - Reader gate

/// What an environment does around each read transaction, for readers that coordinate with
/// writers outside LMDB's reader table (an environment opened with ``Environment/Flags/noLock``).
public protocol ReaderGate: Sendable {
  /// Called before a read transaction begins; throwing refuses the transaction (the error reaches
  /// the caller of ``Environment/read(_:)`` unchanged).
  func enter() throws
  /// Called after the transaction ended, once for every ``enter()`` that did not throw.
  func leave()
}
