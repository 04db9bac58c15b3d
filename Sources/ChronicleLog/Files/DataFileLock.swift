#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

import ChronicleLMDB

/// Locks on `data.mdb` itself, which every name of the file shares: a hard link to it, or a
/// directory whose `chronicle.lock` was deleted, meets the same locks.
///
/// `chronicle.lock` stays the first claim of a writer (it also guards the creation of a new log),
/// but a lock file can be deleted or left behind when `data.mdb` is hard-linked elsewhere. So a
/// writer also claims the data file:
/// - **byte 0**, exclusive, taken without waiting: a second writer, through any name of the file,
///   gets ``LogError/locked(path:)`` at once;
/// - **byte 1**, exclusive, held as long as the writer is open. A reader that reads without LMDB's
///   reader table (``Environment/Flags/noLock``: a user who cannot write the log's directory)
///   holds byte 1 *shared* for each read transaction, so a writer never starts while such a
///   reader is inside a transaction, and such a reader never starts a transaction while a writer
///   is open (byte 0 held): it stops with ``LogError/writerAppeared(path:)`` instead of reading
///   pages the writer may be reusing.
///
/// On Linux these are open-file-description locks (`F_OFD_SETLK`): they belong to this descriptor
/// alone, so closing another descriptor of `data.mdb` in the process (LMDB's, or a check that
/// reads the file) does not drop them, and they are released explicitly in ``release()``. Other
/// systems use `flock(2)` on the whole file for the writer's claim and have no reader gate.
final class DataFileLock: Sendable {
  private let descriptor: Int32
  private let logPath: String

  private init(descriptor: Int32, logPath: String) {
    self.descriptor = descriptor
    self.logPath = logPath
  }

  /// How long a starting writer waits for lock-free readers to end the transaction they are in.
  /// Their transactions are short (every scan renews its transaction); past this, the writer goes
  /// on, and such a reader stops at its next transaction.
  static let readerDrainLimit: Duration = .seconds(2)

  /// A writer's claim on the data file at `dataPath`.
  ///
  /// - Throws: ``LogError/locked(path:)`` when another writer holds it, through any name of the file.
  static func claimForWriting(dataPath: String, logPath: String) throws(LogError) -> DataFileLock {
    let fd = open(dataPath, O_RDWR | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == EACCES || code == EPERM || code == EROFS {
        throw .permissionDenied(path: dataPath, operation: "locking for writing")
      }
      throw .notALog(path: logPath, reason: "cannot open \(dataPath) to lock it: \(String(cString: strerror(code)))")
    }
    #if os(Linux)
      guard Self.lock(fd, byte: 0, type: F_WRLCK) else {
        close(fd)
        throw .locked(path: logPath)
      }
      // Lock-free readers leave byte 1 between their transactions: wait for the ones inside one.
      let clock = ContinuousClock()
      let deadline = clock.now + readerDrainLimit
      while !Self.lock(fd, byte: 1, type: F_WRLCK), clock.now < deadline {
        Self.pause()
      }
    #else
      guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
        close(fd)
        throw .locked(path: logPath)
      }
    #endif
    return DataFileLock(descriptor: fd, logPath: logPath)
  }

  /// A lock-free reader's gate on the data file at `dataPath`, or `nil` where there is none (not
  /// Linux, or the file cannot be opened).
  static func readerGate(dataPath: String, logPath: String) -> DataFileLock? {
    #if os(Linux)
      let fd = open(dataPath, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { return nil }
      return DataFileLock(descriptor: fd, logPath: logPath)
    #else
      return nil
    #endif
  }

  /// Releases the writer's claim, explicitly: a descriptor inherited by a child process that has
  /// not yet exec'd must keep nothing locked. Idempotent.
  func release() {
    #if os(Linux)
      _ = Self.lock(descriptor, byte: 0, length: 2, type: F_UNLCK)
    #else
      flock(descriptor, LOCK_UN)
    #endif
  }

  deinit {
    release()
    close(descriptor)
  }

  #if os(Linux)
    /// `F_OFD_GETLK` and `F_OFD_SETLK` from `<fcntl.h>` (Linux 3.15 and later, the same number on
    /// every architecture), which Glibc's module does not export: it defines them only with `_GNU_SOURCE`.
    private static let getOFDLock: Int32 = 36
    private static let setOFDLock: Int32 = 37

    /// Takes (or, with `F_UNLCK`, gives back) an open-file-description lock on `length` bytes
    /// from `byte`, without waiting; whether it succeeded.
    private static func lock(_ fd: Int32, byte: Int, length: Int = 1, type: Int32) -> Bool {
      var request = flock()
      request.l_type = Int16(type)
      request.l_whence = Int16(SEEK_SET)
      request.l_start = off_t(byte)
      request.l_len = off_t(length)
      request.l_pid = 0
      return fcntl(fd, setOFDLock, &request) == 0
    }

    /// Whether another open file description holds a write lock on `byte`.
    private static func isWriteLocked(_ fd: Int32, byte: Int) -> Bool {
      var request = flock()
      request.l_type = Int16(F_RDLCK)
      request.l_whence = Int16(SEEK_SET)
      request.l_start = off_t(byte)
      request.l_len = 1
      request.l_pid = 0
      return fcntl(fd, getOFDLock, &request) == 0 && request.l_type != Int16(F_UNLCK)
    }

    /// Sleeps the calling thread for 2 ms (a lock held by another process wakes nobody).
    private static func pause() {
      var request = timespec(tv_sec: 0, tv_nsec: 2_000_000)
      _ = nanosleep(&request, nil)
    }
  #endif
}

// MARK: - The reader gate

extension DataFileLock: ReaderGate {
  /// Holds byte 1 shared for one read transaction; refuses when a writer holds the file. Byte 0 is
  /// checked after byte 1 is held: a writer that claimed byte 0 meanwhile waits for this
  /// transaction, and no later one begins, so a busy reader cannot starve a starting writer.
  func enter() throws {
    #if os(Linux)
      guard Self.lock(descriptor, byte: 1, type: F_RDLCK) else { throw LogError.writerAppeared(path: logPath) }
      guard !Self.isWriteLocked(descriptor, byte: 0) else {
        leave()
        throw LogError.writerAppeared(path: logPath)
      }
    #endif
  }

  /// Gives byte 1 back after the transaction.
  func leave() {
    #if os(Linux)
      _ = Self.lock(descriptor, byte: 1, type: F_UNLCK)
    #endif
  }
}
