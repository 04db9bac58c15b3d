import CChronicleLMDB

/// A transaction, handed to the closures of ``Environment/read(_:)`` and
/// ``Environment/write(_:)``. It must not escape them.
///
/// Byte buffers it returns point into the memory map: they are valid until the
/// transaction ends (or, for write transactions, until the next write to the
/// same database). Copy what you keep.
public final class Transaction {
  let handle: OpaquePointer
  /// The environment the transaction belongs to.
  public unowned let environment: Environment
  /// Whether this is a read-only transaction.
  public let isReadOnly: Bool
  private var isOpen = true
  /// Set when any operation failed with `MDB_MAP_FULL`: the environment grows the map and retries.
  private(set) var sawMapFull = false

  /// The transaction's id (`mdb_txn_id`): for a read transaction, the id of the
  /// committed transaction whose state it sees, as the reader table records it.
  public var id: Int { Int(mdb_txn_id(handle)) }

  init(_ handle: OpaquePointer, environment: Environment, readOnly: Bool) {
    self.handle = handle
    self.environment = environment
    self.isReadOnly = readOnly
  }

  func commit() throws(LMDBError) {
    guard isOpen else { return }
    isOpen = false
    let rc = mdb_txn_commit(handle)
    if rc == MDB_MAP_FULL { sawMapFull = true }
    try check(rc, "committing a transaction on \(environment.path)")
  }

  func abort() {
    guard isOpen else { return }
    isOpen = false
    mdb_txn_abort(handle)
  }

  private func checked(_ rc: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
    guard rc != MDB_SUCCESS else { return }
    if rc == MDB_MAP_FULL { sawMapFull = true }
    throw LMDBError(code: .init(rawValue: rc), operation: "\(operation()) (\(environment.path))")
  }

  // MARK: - Databases

  /// Opens the named database (or the unnamed main one for `nil`), creating it if asked.
  ///
  /// The handle stays valid for the environment's life once this transaction
  /// commits; if it aborts, the handle is closed with it.
  public func openDatabase(named name: String?, create: Bool = false) throws -> Database {
    var dbi = MDB_dbi()
    try checked(
      mdb_dbi_open(handle, name, create ? UInt32(MDB_CREATE) : 0, &dbi), "opening database '\(name ?? "<main>")'")
    return Database(id: dbi, name: name)
  }

  // MARK: - Reading

  /// Calls `body` with the value stored under `key`, or returns `nil` if there is none.
  public func withValue<R>(
    forKey key: UnsafeRawBufferPointer, in db: Database, _ body: (UnsafeRawBufferPointer) throws -> R
  ) throws -> R? {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val()
    let rc = mdb_get(handle, db.id, &k, &v)
    if rc == MDB_NOTFOUND { return nil }
    try checked(rc, "get in '\(db.label)'")
    return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
  }

  /// The value stored under `key`, copied out, or `nil`.
  public func get(forKey key: [UInt8], in db: Database) throws -> [UInt8]? {
    try key.withUnsafeBytes { k in try withValue(forKey: k, in: db) { Array($0) } }
  }

  /// Page statistics and entry count of `db`.
  public func statistics(of db: Database) throws -> Statistics {
    var stat = MDB_stat()
    try checked(mdb_stat(handle, db.id, &stat), "stat of '\(db.label)'")
    return Statistics(stat)
  }

  /// Opens a cursor on `db` for the duration of `body`.
  public func withCursor<R>(on db: Database, _ body: (Cursor) throws -> R) throws -> R {
    var cursor: OpaquePointer?
    try checked(mdb_cursor_open(handle, db.id, &cursor), "opening a cursor on '\(db.label)'")
    defer { mdb_cursor_close(cursor) }
    return try body(Cursor(cursor!, database: db, transaction: self))
  }

  // MARK: - Writing

  /// Options for `put(_:forKey:in:flags:)`, in both its forms.
  public struct PutFlags: OptionSet, Sendable, Hashable {
    /// The raw C flags.
    public var rawValue: UInt32
    /// Wraps raw C flags.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `MDB_NOOVERWRITE`: fail with `.keyExists` if the key is present.
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))
    /// `MDB_APPEND`: the key sorts after every key in the database (fast bulk load); fails with `.keyExists` otherwise.
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
  }

  /// Stores `value` under `key`.
  public func put(
    _ value: UnsafeRawBufferPointer, forKey key: UnsafeRawBufferPointer, in db: Database, flags: PutFlags = []
  ) throws {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
    try checked(mdb_put(handle, db.id, &k, &v, flags.rawValue), "put in '\(db.label)'")
  }

  /// Stores `value` under `key`.
  public func put(_ value: [UInt8], forKey key: [UInt8], in db: Database, flags: PutFlags = []) throws {
    try value.withUnsafeBytes { v in
      try key.withUnsafeBytes { k in try put(v, forKey: k, in: db, flags: flags) }
    }
  }

  /// Reserves `count` bytes under `key` and lets `fill` write them in place
  /// (`MDB_RESERVE`), saving a copy of large values.
  public func put(
    reserving count: Int, forKey key: UnsafeRawBufferPointer, in db: Database, flags: PutFlags = [],
    fill: (UnsafeMutableRawBufferPointer) throws -> Void
  ) throws {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var v = MDB_val(mv_size: count, mv_data: nil)
    try checked(mdb_put(handle, db.id, &k, &v, flags.rawValue | UInt32(MDB_RESERVE)), "put in '\(db.label)'")
    try fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
  }

  /// Deletes `key`; returns whether it was there.
  @discardableResult
  public func delete(forKey key: UnsafeRawBufferPointer, in db: Database) throws -> Bool {
    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    let rc = mdb_del(handle, db.id, &k, nil)
    if rc == MDB_NOTFOUND { return false }
    try checked(rc, "delete in '\(db.label)'")
    return true
  }

  /// Deletes `key`; returns whether it was there.
  @discardableResult
  public func delete(forKey key: [UInt8], in db: Database) throws -> Bool {
    try key.withUnsafeBytes { try delete(forKey: $0, in: db) }
  }

  /// Removes every entry of `db`, keeping the database itself.
  public func empty(_ db: Database) throws {
    try checked(mdb_drop(handle, db.id, 0), "emptying '\(db.label)'")
  }
}

@available(*, unavailable, message: "LMDB transactions are tied to the closure (and thread) that began them")
extension Transaction: Sendable {}
