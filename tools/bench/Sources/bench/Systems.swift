import Chronicle
import ChronicleLog
import Foundation
import GRDB
import ChronicleLMDB

// MARK: - Chronicle

typealias LedgerStore = Store<Ledger.State, Ledger.Action>

/// Opening Chronicle stores the way the workloads need them.
enum ChronicleSystem {
  /// Store options: the defaults (snapshot every 1,000, CBOR, undo depth 100) unless told otherwise.
  static func options(
    durability: Durability = .normal, codec: PayloadCodec = .cbor, stateSchemaVersion: UInt32 = 1
  ) -> StoreOptions {
    StoreOptions(durability: durability, codec: codec, stateSchemaVersion: stateSchemaVersion)
  }

  /// Opens (creating or recovering) a store of `reducer` in `directory`.
  static func store<R: Reducer>(
    _ directory: String, reducer: R, initialState: R.State, options: StoreOptions
  ) throws -> Store<R.State, R.Action> {
    try Store(
      initialState: initialState, reducer: reducer, log: .directory(URL(fileURLWithPath: directory, isDirectory: true)),
      options: options)
  }

  /// Opens (creating or recovering) a ledger store in `directory`.
  static func ledger(_ directory: String, initialState: Ledger.State, options: StoreOptions) throws -> LedgerStore {
    try store(directory, reducer: Ledger(), initialState: initialState, options: options)
  }

  /// The size of an entry Chronicle stores for `action`: header, type name, CBOR payload, hash.
  static func entrySize(of action: Ledger.Action) throws -> Int {
    24 + action.typeName.utf8.count + (try PayloadCodec.cbor.encode(action)).count + 32
  }
}

// MARK: - Raw LMDB

/// The limit: LMDB through Chronicle's own `ChronicleLMDB` module, with nothing on top.
/// Values are opaque bytes of the size of a Chronicle entry, keys big-endian sequence numbers.
final class RawLMDB {
  let environment: Environment
  let database: ChronicleLMDB.Database
  private(set) var count: UInt64
  private let value: [UInt8]

  init(_ directory: String, synced: Bool, valueSize: Int, readOnly: Bool = false) throws {
    var flags: Environment.Flags = synced ? [] : .noSync
    if readOnly { flags = .readOnly }
    environment = try Environment(
      path: directory, configuration: .init(mapSize: 1 << 30, maxDatabases: 2, flags: flags))
    database = try environment.openDatabase(named: "entries", create: !readOnly)
    let database = database
    count = UInt64(try environment.read { try $0.statistics(of: database).entries })
    value = (0..<valueSize).map { UInt8(truncatingIfNeeded: $0 &* 31) }
  }

  /// One put in its own transaction.
  func putOne() throws {
    count += 1
    var key = count.bigEndian
    try withUnsafeBytes(of: &key) { key in
      try value.withUnsafeBytes { value in
        try environment.write { txn in try txn.put(value, forKey: key, in: database, flags: .append) }
      }
    }
  }

  /// `n` puts in one transaction.
  func putBatch(_ n: Int) throws {
    let first = count + 1
    try value.withUnsafeBytes { value in
      try environment.write { txn in
        for seq in first..<(first + UInt64(n)) {
          var key = seq.bigEndian
          try withUnsafeBytes(of: &key) { try txn.put(value, forKey: $0, in: database, flags: .append) }
        }
      }
    }
    count += UInt64(n)
  }

  /// Walks every entry with a cursor, touching each value; returns how many there were.
  func scan() throws -> Int {
    try environment.read { txn in
      try txn.withCursor(on: database) { cursor in
        var entries = 0
        var checksum = 0
        var item = try cursor.first()
        while let (_, value) = item {
          entries += 1
          checksum &+= value.count &+ Int(value[0])
          item = try cursor.next()
        }
        if checksum == 0 { throw BenchError("an empty scan") }
        return entries
      }
    }
  }

  func close() { environment.close() }
}

// MARK: - GRDB

/// The peer a Swift developer would pick for an event table: SQLite through GRDB,
/// WAL, one row per action (JSON payload via `Codable`), the state folded in memory.
final class GRDBEventStore {
  static let insertSQL = "INSERT INTO events (ts, type, payload) VALUES (?, ?, ?)"

  let queue: DatabaseQueue
  private(set) var state: Ledger.State
  private let encoder = JSONEncoder()

  /// Opens the event table at `path`; `synchronous` is `NORMAL` or `FULL`.
  init(_ path: String, synchronous: String, initialState: Ledger.State, readOnly: Bool = false) throws {
    var configuration = Configuration()
    configuration.journalMode = .wal
    configuration.readonly = readOnly
    queue = try DatabaseQueue(path: path, configuration: configuration)
    state = initialState
    guard !readOnly else { return }
    try queue.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
      let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode")
      let level = try Int.fetchOne(db, sql: "PRAGMA synchronous")
      guard mode == "wal", level == (synchronous == "FULL" ? 2 : 1) else {
        throw BenchError("GRDB opened with journal_mode \(mode ?? "?") and synchronous \(level ?? -1)")
      }
      try db.execute(
        sql: """
          CREATE TABLE IF NOT EXISTS events (
            seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL, type TEXT NOT NULL, payload BLOB NOT NULL)
          """)
    }
  }

  /// Appends one action in its own transaction, then folds it.
  func send(_ action: Ledger.Action) throws {
    let payload = try encoder.encode(action)
    let timestamp = Date().microsecondsSince1970
    try queue.write { db in
      try db.cachedStatement(sql: Self.insertSQL).execute(arguments: [timestamp, action.typeName, payload])
    }
    Ledger.apply(action, to: &state.balances)
  }

  /// Appends the actions in one transaction, then folds them.
  func send(contentsOf actions: [Ledger.Action]) throws {
    let payloads = try actions.map { try encoder.encode($0) }
    let timestamp = Date().microsecondsSince1970
    try queue.write { db in
      let statement = try db.cachedStatement(sql: Self.insertSQL)
      for (action, payload) in zip(actions, payloads) {
        try statement.execute(arguments: [timestamp, action.typeName, payload])
      }
    }
    for action in actions { Ledger.apply(action, to: &state.balances) }
  }

  /// Reads every row in order, decodes it and folds it into the state; returns how many.
  func replay() throws -> Int {
    let decoder = JSONDecoder()
    var state = state
    let count = try queue.read { db in
      var count = 0
      let rows = try Row.fetchCursor(db, sql: "SELECT payload FROM events ORDER BY seq")
      while let row = try rows.next() {
        let action = try row.withUnsafeData(atIndex: 0) { payload in
          guard let payload else { throw BenchError("a row without payload") }
          return try decoder.decode(Ledger.Action.self, from: payload)
        }
        Ledger.apply(action, to: &state.balances)
        count += 1
      }
      return count
    }
    self.state = state
    return count
  }

  func close() throws { try queue.close() }
}

// MARK: - JSON file

/// The seeds' persistence model: the whole state encoded to JSON and written
/// to a file after every action (write to a temporary file, rename over the
/// old one; with `synced`, fsync before the rename).
final class JSONFileModel {
  let path: String
  let synced: Bool
  private(set) var state: Ledger.State
  private let encoder = JSONEncoder()

  init(_ path: String, synced: Bool, initialState: Ledger.State) {
    self.path = path
    self.synced = synced
    state = initialState
  }

  func send(_ action: Ledger.Action) throws {
    Ledger.apply(action, to: &state.balances)
    let data = try encoder.encode(state)
    let temporary = path + ".tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw BenchError("cannot create \(temporary): errno \(errno)") }
    defer { close(fd) }
    let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard written == data.count else { throw BenchError("short write to \(temporary)") }
    if synced, fsync(fd) != 0 { throw BenchError("fsync of \(temporary) failed: errno \(errno)") }
    guard rename(temporary, path) == 0 else { throw BenchError("cannot rename \(temporary): errno \(errno)") }
  }
}
