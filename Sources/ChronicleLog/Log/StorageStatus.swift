import ChronicleLMDB
import Synchronization

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
