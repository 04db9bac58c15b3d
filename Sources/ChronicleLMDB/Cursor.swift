import CChronicleLMDB

/// A cursor over one database, handed to ``Transaction/withCursor(on:_:)``'s closure.
///
/// Each positioning call returns the key and value at the new position, or
/// `nil` when there is none. The buffers are valid until the next call on the
/// cursor or the end of the transaction.
///
/// ```swift
/// try env.read { txn in
///   try txn.withCursor(on: db) { cursor in
///     var item = try cursor.first()
///     while let (key, value) = item { …; item = try cursor.next() }
///   }
/// }
/// ```
public final class Cursor {
  /// A key and its value, pointing into the memory map.
  public typealias Item = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

  private let handle: OpaquePointer
  private let database: Database
  private unowned let transaction: Transaction

  init(_ handle: OpaquePointer, database: Database, transaction: Transaction) {
    self.handle = handle
    self.database = database
    self.transaction = transaction
  }

  private func get(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws(LMDBError) -> Item? {
    var k = MDB_val(mv_size: key?.count ?? 0, mv_data: UnsafeMutableRawPointer(mutating: key?.baseAddress))
    var v = MDB_val()
    let rc = mdb_cursor_get(handle, &k, &v, op)
    if rc == MDB_NOTFOUND { return nil }
    try check(rc, "moving a cursor on '\(database.label)' (\(transaction.environment.path))")
    return (UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
  }

  /// Moves to the first key.
  public func first() throws -> Item? { try get(MDB_FIRST) }
  /// Moves to the last key.
  public func last() throws -> Item? { try get(MDB_LAST) }
  /// Moves to the next key.
  public func next() throws -> Item? { try get(MDB_NEXT) }
  /// Moves to the previous key.
  public func previous() throws -> Item? { try get(MDB_PREV) }
  /// Moves to the first key greater than or equal to `key`.
  public func seek(atLeast key: UnsafeRawBufferPointer) throws -> Item? { try get(MDB_SET_RANGE, key: key) }
  /// Moves to exactly `key`.
  public func seek(exactly key: UnsafeRawBufferPointer) throws -> Item? { try get(MDB_SET_KEY, key: key) }

  /// Moves to the last key less than or equal to `key`.
  public func seek(atMost key: UnsafeRawBufferPointer) throws -> Item? {
    guard let item = try seek(atLeast: key) else { return try last() }
    if item.key.elementsEqual(key) { return item }
    return try previous()
  }

  /// Deletes the key/value pair at the cursor's position.
  public func deleteCurrent() throws {
    try check(mdb_cursor_del(handle, 0), "deleting at a cursor on '\(database.label)' (\(transaction.environment.path))")
  }
}

@available(*, unavailable, message: "LMDB cursors are tied to their transaction")
extension Cursor: Sendable {}
