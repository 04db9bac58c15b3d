import LMDB
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

/// What ``ActionLog/storageStatus()`` reports: LMDB's reader table and freelist.
public struct StorageStatus: Sendable, Hashable {
  /// One slot of the reader table.
  public struct Reader: Sendable, Hashable {
    /// The process holding the slot.
    public var pid: Int32
    /// The transaction (snapshot) the slot reads, or `nil` when it reads none now.
    public var transactionID: Int?
    /// Whether the process is gone: the slot pins pages until a writer clears it.
    public var isStale: Bool
    /// Whether the slot belongs to the calling process.
    public var isThisProcess: Bool
    /// How many commits the snapshot is behind the newest (`nil` when it reads none):
    /// pages freed by those commits cannot be reused while it reads.
    public var transactionsBehind: Int?

    /// Creates a description.
    public init(pid: Int32, transactionID: Int?, isStale: Bool, isThisProcess: Bool, transactionsBehind: Int?) {
      self.pid = pid
      self.transactionID = transactionID
      self.isStale = isStale
      self.isThisProcess = isThisProcess
      self.transactionsBehind = transactionsBehind
    }
  }

  /// The slots in use, live and stale.
  public var readers: [Reader]
  /// Whether there is a reader table at all (`lock.mdb`; a reader of a log no writer ever
  /// opened here has none).
  public var hasReaderTable: Bool
  /// The size of the reader table.
  public var maxReaders: Int
  /// The id of the last committed transaction.
  public var lastTransactionID: Int
  /// LMDB's page size in bytes.
  public var pageSize: Int
  /// Pages used: the file's high-water mark.
  public var usedPages: Int
  /// Pages on the freelist, reusable by later commits.
  public var freePages: Int
  /// The map size in bytes.
  public var mapSize: Int
  /// The size of `data.mdb` in bytes.
  public var fileSize: Int

  /// Creates a report.
  public init(
    readers: [Reader], hasReaderTable: Bool, maxReaders: Int, lastTransactionID: Int, pageSize: Int, usedPages: Int,
    freePages: Int, mapSize: Int, fileSize: Int
  ) {
    self.readers = readers
    self.hasReaderTable = hasReaderTable
    self.maxReaders = maxReaders
    self.lastTransactionID = lastTransactionID
    self.pageSize = pageSize
    self.usedPages = usedPages
    self.freePages = freePages
    self.mapSize = mapSize
    self.fileSize = fileSize
  }

  /// The slots whose process is gone.
  public var staleReaders: [Reader] { readers.filter(\.isStale) }
  /// The slots whose process is alive.
  public var liveReaders: [Reader] { readers.filter { !$0.isStale } }
}

// MARK: - The writer's periodic check

/// When a writer checks the reader table while it appends: after this many commits, this
/// many appended bytes, or this much time since the last check, whichever comes first.
public enum ReaderCheckPolicy {
  /// Commits between checks.
  public static let commits = 32
  /// Appended bytes (entry values) between checks.
  public static let bytes = 1 << 20
  /// Time between checks, counted when a commit happens (an idle writer grows nothing).
  public static let interval = Duration.milliseconds(100)
}

/// The writer's count of commits and bytes since its last reader check, and what checks cleared.
final class ReaderWatch: Sendable {
  private struct Counters {
    var commits = 0
    var bytes = 0
    var lastCheck = ContinuousClock.now
    var cleared = 0
    var handler: (@Sendable (Int) -> Void)?
  }

  private let counters = Mutex(Counters())

  init() {}

  var cleared: Int { counters.withLock { $0.cleared } }

  var handler: (@Sendable (Int) -> Void)? {
    get { counters.withLock { $0.handler } }
    set { counters.withLock { $0.handler = newValue } }
  }

  /// Adds what a check cleared and calls the handler if it cleared any.
  func record(cleared: Int) {
    guard cleared > 0 else { return }
    let handler = counters.withLock { counters in
      counters.cleared += cleared
      return counters.handler
    }
    handler?(cleared)
  }

  /// Counts a commit of `bytes` and, when one is due, checks the reader table of `environment`.
  /// A failed check is retried at the next commit (it changes nothing on disk).
  func afterCommit(bytes: Int, environment: Environment) {
    let now = ContinuousClock.now
    let due = counters.withLock { counters -> Bool in
      counters.commits += 1
      counters.bytes += bytes
      guard
        counters.commits >= ReaderCheckPolicy.commits || counters.bytes >= ReaderCheckPolicy.bytes
          || now - counters.lastCheck >= ReaderCheckPolicy.interval
      else { return false }
      counters.commits = 0
      counters.bytes = 0
      counters.lastCheck = now
      return true
    }
    guard due, let cleared = try? environment.readerCheck() else { return }
    record(cleared: cleared)
  }
}
