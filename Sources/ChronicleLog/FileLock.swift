#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

import Synchronization

/// An exclusive, non-blocking `flock` on a file: the writer's claim on a log.
///
/// `flock` locks belong to an open file description, so a second `open` of
/// the same file conflicts even inside one process: one writer per log,
/// whatever process it lives in. The kernel drops the lock when the process
/// dies, so a crashed writer never leaves a stale lock behind.
final class FileLock: Sendable {
  let path: String
  private let descriptor: Mutex<Int32?>

  /// Takes the lock, creating the file (mode 0600) if needed.
  init(path: String, logPath: String) throws(LogError) {
    self.path = path
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      if errno == EACCES || errno == EPERM || errno == EROFS {
        throw .permissionDenied(path: path, operation: "creating the writer lock")
      }
      throw .notALog(path: logPath, reason: "cannot open its lock file \(path): \(String(cString: strerror(errno)))")
    }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      let code = errno
      close(fd)
      if code == EWOULDBLOCK { throw .locked(path: logPath) }
      throw .notALog(path: logPath, reason: "cannot lock \(path): \(String(cString: strerror(code)))")
    }
    descriptor = Mutex(fd)
  }

  /// Releases the lock (closing the file drops it). Idempotent.
  func release() {
    descriptor.withLock { fd in
      if let open = fd { close(open) }
      fd = nil
    }
  }

  deinit { release() }
}
