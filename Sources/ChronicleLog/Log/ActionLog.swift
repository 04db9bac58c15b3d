import Foundation
import ChronicleLMDB
import Synchronization

/// Chronicle's append-only log: entries with gapless sequence numbers and a
/// SHA-256 hash chain, snapshots, and meta data, in one LMDB environment.
///
/// It is usable on its own, without the engine:
///
/// ```swift
/// let log = try ActionLog(directory: url, options: .init(appID: "ledger"))
/// let seq = try log.append(NewEntry(encoding: Transfer(from: "a", to: "b", cents: 500),
///                                   typeName: "transfer", codec: .cbor))
/// let record = try log.record(at: seq)
/// let report = try log.verify()   // report.isValid, report.firstBadSeq
/// try log.close()
/// ```
///
/// One process at a time may open a log for writing (``Access/readWrite``);
/// a second writer, in this process or another, gets ``LogError/locked(path:)``
/// at once. Any number of read-only instances may read meanwhile and see
/// every committed entry. The log is `Sendable`: appends from several threads
/// are serialized and get gapless sequence numbers.
public final class ActionLog: Sendable {
  /// The on-disk format this version writes for a log in the clear.
  public static let formatVersion: UInt32 = 1
  /// The on-disk format of an encrypted log (created with a ``KeyRing``), and the newest this version reads.
  public static let encryptedFormatVersion: UInt32 = 2

  /// How a log is opened.
  public enum Access: Sendable, Hashable {
    /// Exclusive writer (creating the log if needed and allowed).
    case readWrite
    /// Reader: never writes a byte, works while a writer is active.
    case readOnly
  }

  /// Options for opening a log.
  public struct Options: Sendable, Hashable {
    /// When commits reach the disk. Ignored for read-only access.
    public var durability: Durability
    /// With `.normal` durability, how often a background task syncs to disk; `nil` for never.
    public var flushInterval: Duration?
    /// The app's identifier: recorded when the log is created; when not empty, an
    /// existing log created by another app is refused.
    public var appID: String
    /// The app's action schema version: recorded when the log is created.
    public var schemaVersion: UInt32
    /// Create the directory and log when missing (read-write access only).
    public var createIfMissing: Bool
    /// The initial LMDB map size in bytes; it grows by doubling when full, up to ``maxLogSize``.
    public var initialMapSize: Int
    /// The log file's ceiling in bytes (the LMDB map's, which grows up to it): an append beyond it
    /// fails with a clear error. The same as the engine's `StoreOptions.maxLogSize`.
    public var maxLogSize: Int
    /// The keys of an encrypted log: a log created with a ring is encrypted (format 2), and
    /// writing to an encrypted log needs one; a reader without one verifies the log and sees
    /// its records as encrypted. `nil` (the default) for a log in the clear.
    public var keyRing: KeyRing?
    /// Whether reading an entry sealed with a key the ring does not hold returns it with
    /// ``StoredEntry/sealedKeyID`` set and no content (what tools show as *encrypted*) instead of
    /// throwing ``LogError/keyMissing(path:seq:keyID:)``. A ciphertext that does not decrypt always throws.
    public var returnsSealedEntries: Bool
    /// The 16-byte identifier a log created now records (its checkpoints' origin and an encrypted
    /// log's seals name it); `nil` (the default) for a random one. A shared stream's copies all
    /// take the stream's (``SharedStream/id``). An existing log keeps its own.
    public var logID: [UInt8]?
    /// Opens an encrypted log for writing without a key ring, for copying stored records as they
    /// are (salvage): such a handle never seals or opens a record.
    var copiesStoredRecords = false

    /// Creates options.
    public init(
      durability: Durability = .normal, flushInterval: Duration? = .seconds(1), appID: String = "",
      schemaVersion: UInt32 = 1, createIfMissing: Bool = true, initialMapSize: Int = 64 << 20,
      maxLogSize: Int = 1 << 40, keyRing: KeyRing? = nil, returnsSealedEntries: Bool = false, logID: [UInt8]? = nil
    ) {
      self.logID = logID
      self.returnsSealedEntries = returnsSealedEntries
      self.keyRing = keyRing
      self.durability = durability
      self.flushInterval = flushInterval
      self.appID = appID
      self.schemaVersion = schemaVersion
      self.createIfMissing = createIfMissing
      self.initialMapSize = initialMapSize
      self.maxLogSize = maxLogSize
    }
  }

  /// The log's directory path.
  public let path: String
  /// How this instance opened the log.
  public let access: Access
  /// The options it was opened with.
  public let options: Options

  let environment: Environment
  /// The directory's device and inode: the key of the per-process writer locks.
  let identity: LogDirectory.Identity
  let entriesDB: Database
  let snapshotsDB: Database
  let metaDB: Database
  /// Seals and opens the records of an encrypted log; `nil` for a log in the clear.
  let cipher: RecordCipher?
  private let writerLock: FileLock?
  /// The writer's claim on `data.mdb` itself (see `Files/DataFileLock.swift`); `nil` for readers.
  private let dataFileLock: DataFileLock?
  private let flusher: BackgroundFlusher?
  private let removeOnClose: Bool
  /// The writer's periodic check for stale readers (see `ActionLog+Readers.swift`).
  let readerWatch: ReaderWatch

  struct State {
    var isClosed = false
    /// The writer's view of the chain's end (unused by readers, which ask LMDB).
    var last = ChainAnchor.genesis
    /// The anchor's sequence number when the writer opened the log: its head while it holds no entry.
    var anchorSeq: UInt64 = 0
    /// The writer's Merkle tree (see `Tree/TreeStorage.swift`); `nil` for readers and when it cannot follow the entries.
    var tree: TreeWriter?
  }
  let state: Mutex<State>

  /// Opens the log in `directory`.
  ///
  /// - Throws: ``LogError`` naming the path: `.noSuchLog`, `.notADirectory`,
  ///   `.notALog` (with what was found), `.newerFormat`, `.appMismatch`,
  ///   `.locked`, `.openReadOnlyInThisProcess`, `.permissionDenied`. A failed open creates and changes nothing
  ///   (read-only), or nothing but the directory it was asked to create.
  public convenience init(directory: URL, access: Access = .readWrite, options: Options = Options()) throws {
    try self.init(path: directory.standardizedFileURL.path, access: access, options: options, removeOnClose: false)
  }

  /// A writable log in a new private temporary directory that is deleted on ``close()``:
  /// the storage behind the engine's in-memory mode, behaving exactly like a real log.
  public static func temporary(options: Options = Options(durability: .normal, flushInterval: nil)) throws
    -> ActionLog
  {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("chronicle-\(UUID().uuidString)", isDirectory: true).path
    return try ActionLog(path: path, access: .readWrite, options: options, removeOnClose: true)
  }

  private init(path: String, access: Access, options: Options, removeOnClose: Bool) throws(LogError) {
    let layout = try LogDirectory.prepare(path: path, access: access, createIfMissing: options.createIfMissing)
    let path = layout.canonicalPath
    self.path = path
    self.identity = layout.identity
    self.access = access
    self.options = options
    self.removeOnClose = removeOnClose
    let readerWatch = ReaderWatch()
    self.readerWatch = readerWatch
    let writerLock =
      access == .readWrite ? try FileLock(path: layout.lockPath, identity: layout.identity, logPath: path) : nil
    self.writerLock = writerLock
    /// Undoes what a failed open did: leaves a directory that is no log as it was found.
    func abandon() {
      writerLock?.release()
      if writerLock != nil, !layout.hasWriterLockFile { try? FileManager.default.removeItem(atPath: layout.lockPath) }
    }

    var flags: Environment.Flags = []
    switch access {
    case .readOnly:
      flags.insert(.readOnly)
      // A reader always uses LMDB's reader table, recreating a missing lock.mdb: a writer
      // that starts meanwhile must see the reader's snapshot and leave its pages alone.
      // Only where nobody can create lock.mdb (a directory this user cannot write to) can
      // no LMDB writer run either; LMDB itself goes on without locks on a read-only file system.
      if !layout.hasLockFile, !FileManager.default.isWritableFile(atPath: path) { flags.insert(.noLock) }
    case .readWrite:
      if options.durability == .normal { flags.insert(.noSync) }
    }
    let configuration = Environment.Configuration(
      mapSize: min(options.initialMapSize, options.maxLogSize), maxMapSize: options.maxLogSize, maxDatabases: 8,
      flags: flags)
    let dataPath = path + "/" + LogDirectory.dataFile
    do throws(LogError) {
      let gate = flags.contains(.noLock) ? DataFileLock.readerGate(dataPath: dataPath, logPath: path) : nil
      environment = try Self.sharedEnvironment(path: path, configuration: configuration, readerGate: gate)
    } catch {
      abandon()
      if case .readOnly = error, access == .readWrite { throw .openReadOnlyInThisProcess(path: path) }
      throw error
    }
    // A second name of the data file (a hard link, a directory whose chronicle.lock was deleted)
    // meets the first writer here, before this one writes anything.
    do throws(LogError) {
      dataFileLock = access == .readWrite ? try DataFileLock.claimForWriting(dataPath: dataPath, logPath: path) : nil
    } catch {
      environment.releaseShared()
      abandon()
      throw error
    }

    if access == .readWrite { Self.removeWorkLeftovers(path) }
    do throws(LogError) {
      if access == .readWrite { readerWatch.record(cleared: (try? environment.readerCheck()) ?? 0) }
      let databases = try Self.openDatabases(environment, path: path, isNew: !layout.hasDataFile, options: options)
      (entriesDB, snapshotsDB, metaDB) = (databases.entries, databases.snapshots, databases.meta)
      let meta = try Self.readMeta(environment, metaDB, path: path)
      if !options.appID.isEmpty, !meta.appID.isEmpty, meta.appID != options.appID {
        throw LogError.appMismatch(path: path, expected: options.appID, found: meta.appID)
      }
      let encrypted = meta.formatVersion >= Self.encryptedFormatVersion
      if access == .readWrite {
        if encrypted, options.keyRing == nil, !options.copiesStoredRecords {
          throw LogError.encryptionMismatch(
            path: path, reason: "it is encrypted, and writing to it needs its key ring")
        }
        if !encrypted, options.keyRing != nil {
          throw LogError.encryptionMismatch(
            path: path, reason: "it is not encrypted (format \(meta.formatVersion)); `logtool rekey` encrypts a log")
        }
      }
      var initial = State()
      if access == .readWrite {
        initial.last = try Self.readHead(environment, entriesDB, meta: meta, path: path)
        initial.anchorSeq = meta.anchor.seq
        initial.tree = try Self.openTree(
          environment, entries: entriesDB, meta: metaDB, anchor: meta.anchor, head: initial.last)
      }
      cipher =
        encrypted
        ? RecordCipher(
          ring: options.keyRing,
          logID: try Self.encryptionLogID(environment, metaDB, path: path, create: access == .readWrite))
        : nil
      state = Mutex(initial)
    } catch {
      environment.releaseShared()
      dataFileLock?.release()
      abandon()
      throw error
    }
    if access == .readWrite, options.durability == .normal, let interval = options.flushInterval {
      flusher = BackgroundFlusher(interval: interval, environment: environment)
    } else {
      flusher = nil
    }
  }

  /// The process's one environment of the log at `path` (``ChronicleLMDB/Environment/shared(path:configuration:readerGate:)``),
  /// its errors said as ``LogError``s.
  private static func sharedEnvironment(
    path: String, configuration: Environment.Configuration, readerGate: DataFileLock?
  ) throws(LogError) -> Environment {
    do {
      return try Environment.shared(path: path, configuration: configuration, readerGate: readerGate)
    } catch let error as LMDBError {
      switch error.code {
      case .sharedReadOnly:
        throw .readOnly(path: path)
      case .invalid, .versionMismatch, .corrupted:
        throw .notALog(path: path, reason: "data.mdb is not a readable LMDB file (\(error.message))")
      case .permissionDenied:
        throw .permissionDenied(path: path, operation: "opening")
      default:
        throw .storage(error)
      }
    } catch {
      throw .invalidEntry(reason: "\(error)")
    }
  }

  private static func openDatabases(_ env: Environment, path: String, isNew: Bool, options: Options) throws(LogError)
    -> (entries: Database, snapshots: Database, meta: Database)
  {
    do {
      if isNew {
        return try env.write { txn in
          let databases = (
            try txn.openDatabase(named: "entries", create: true),
            try txn.openDatabase(named: "snapshots", create: true),
            try txn.openDatabase(named: "meta", create: true)
          )
          let meta = LogMeta(
            formatVersion: options.keyRing == nil ? ActionLog.formatVersion : ActionLog.encryptedFormatVersion,
            appID: options.appID, schemaVersion: options.schemaVersion,
            created: Date().microsecondsSince1970, anchor: .genesis)
          try MetaRecord.write(meta, in: txn, db: databases.2)
          if let id = options.logID {
            guard id.count == 16 else {
              throw LogError.invalidEntry(reason: "a log identifier has 16 bytes, not \(id.count)")
            }
            try txn.put(id, forKey: Array(TreeStorage.logIDKey.utf8), in: databases.2)
          }
          return databases
        }
      }
      return (
        try env.openDatabase(named: "entries"), try env.openDatabase(named: "snapshots"),
        try env.openDatabase(named: "meta")
      )
    } catch let error as LMDBError where error.code == .notFound || error.code == .incompatible {
      throw .notALog(path: path, reason: "the LMDB environment has no Chronicle databases (entries, snapshots, meta)")
    } catch let error as LMDBError where error.code == .permissionDenied {
      throw .permissionDenied(path: path, operation: "writing to")
    } catch let error as LMDBError {
      throw .storage(error)
    } catch let error as LogError {
      throw error
    } catch {
      throw .notALog(path: path, reason: "\(error)")
    }
  }

  /// Removes the work directories a killed compaction or rekey left inside the log at `path`:
  /// the writer holds the log's locks, so none of them runs now.
  private static func removeWorkLeftovers(_ path: String) {
    for name in [compactionDirectoryName, rekeyDirectoryName] {
      try? FileManager.default.removeItem(atPath: path + "/" + name)
    }
  }

  // MARK: - Closing

  /// Whether ``close()`` was called.
  public var isClosed: Bool { state.withLock { $0.isClosed } }

  /// Syncs (for a writer), releases the writer lock and the environment. Idempotent.
  ///
  /// - Throws: the sync's error; the log is closed all the same.
  public func close() throws {
    let wasOpen = state.withLock { state in
      defer { state.isClosed = true }
      return !state.isClosed
    }
    guard wasOpen else { return }
    flusher?.cancel()
    var syncError: LogError?
    if access == .readWrite {
      do { try storage { try environment.sync(force: true) } } catch { syncError = error }
    }
    environment.releaseShared()
    dataFileLock?.release()
    writerLock?.release()
    if removeOnClose { try? FileManager.default.removeItem(atPath: path) }
    if let syncError { throw syncError }
  }

  deinit {
    let wasOpen = state.withLock { !$0.isClosed }
    if wasOpen {
      flusher?.cancel()
      if access == .readWrite { try? environment.sync(force: true) }
      environment.releaseShared()
      if removeOnClose { try? FileManager.default.removeItem(atPath: path) }
    }
  }

  /// Flushes committed entries to disk now (useful with `.normal` durability).
  public func sync() throws {
    try ensureOpen()
    try storage { try environment.sync(force: true) }
  }

  func ensureOpen() throws(LogError) {
    if state.withLock({ $0.isClosed }) { throw .closed(path: path) }
  }

  /// The size of `data.mdb` in bytes.
  public func fileSize() throws -> Int {
    let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/data.mdb")
    return (attributes?[.size] as? NSNumber)?.intValue ?? 0
  }
}
