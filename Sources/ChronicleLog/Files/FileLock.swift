#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

import Synchronization

/// The writer's claim on a log: an exclusive POSIX record lock (`fcntl`
/// `F_SETLK`) on a lock file, plus a per-process registry.
///
/// POSIX record locks belong to the process, are never inherited by child
/// processes (unlike `flock`, whose lock a forked child keeps until it execs,
/// which made a just-closed log look locked while another thread spawned a
/// process), and are dropped by the kernel when the process dies, so a crashed
/// writer never leaves a stale lock. Because such locks do not conflict within
/// one process, a registry refuses a second writer here — before the file is
/// opened again, since closing any descriptor of the file would drop the
/// process's lock. The registry keys on the log directory's device and inode,
/// not on its path: a second spelling of the same directory (a symbolic link,
/// `..`, a trailing slash) must meet the first writer's claim, or its open and
/// close of the lock file would silently release that writer's lock.
final class FileLock: Sendable {
  let path: String
  let identity: LogDirectory.Identity
  private let descriptor: Mutex<Int32?>
  private static let held = Mutex<Set<LogDirectory.Identity>>([])

  /// Takes the lock of the log directory `identity`, creating the file `path` (mode 0600) if needed.
  init(path: String, identity: LogDirectory.Identity, logPath: String) throws(LogError) {
    self.path = path
    self.identity = identity
    let claimed = Self.held.withLock { $0.insert(identity).inserted }
    guard claimed else { throw .locked(path: logPath) }
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      let code = errno
      Self.held.withLock { _ = $0.remove(identity) }
      if code == EACCES || code == EPERM || code == EROFS {
        throw .permissionDenied(path: path, operation: "creating the writer lock")
      }
      throw .notALog(path: logPath, reason: "cannot open its lock file \(path): \(String(cString: strerror(code)))")
    }
    var request = flock()
    request.l_type = Int16(F_WRLCK)
    request.l_whence = Int16(SEEK_SET)
    guard fcntl(fd, F_SETLK, &request) == 0 else {
      let code = errno
      close(fd)
      Self.held.withLock { _ = $0.remove(identity) }
      if code == EACCES || code == EAGAIN { throw .locked(path: logPath) }
      throw .notALog(path: logPath, reason: "cannot lock \(path): \(String(cString: strerror(code)))")
    }
    descriptor = Mutex(fd)
  }

  /// Releases the lock (closing the file drops it). Idempotent.
  func release() {
    let released = descriptor.withLock { fd -> Bool in
      guard let open = fd else { return false }
      close(open)
      fd = nil
      return true
    }
    if released { Self.held.withLock { _ = $0.remove(identity) } }
  }

  deinit { release() }
}
