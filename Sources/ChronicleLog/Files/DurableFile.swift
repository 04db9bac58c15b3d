import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - Files

/// A file written with plain `write(2)` calls, synced before it is closed.
struct DurableFile {
  let path: String
  private var descriptor: Int32

  /// Creates `path` (mode 0600) exclusively and without following a symbolic link
  /// (`O_CREAT | O_EXCL | O_NOFOLLOW`), and holds an exclusive `flock` on it while it is open.
  ///
  /// When `path` exists it is replaced only if it is stale: a regular file of this user with
  /// no other hard link, that no process holds locked, and whose contents are empty or
  /// satisfy `staleIf` (so only a file this code wrote, left by a killed process). Anything
  /// else there (a symbolic link, a directory, another user's file, a file being written,
  /// other contents) is refused with ``LogError/destinationExists(path:reason:)``.
  init(creatingExclusively path: String, staleIf isOurs: ([UInt8]) -> Bool) throws(LogError) {
    self.path = path
    descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if descriptor < 0, errno == EEXIST {
      try Self.removeStale(path, isOurs: isOurs)
      descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
    guard descriptor >= 0 else {
      let code = errno
      if code == EEXIST {
        throw .destinationExists(path: path, reason: "appeared meanwhile: another process writes it")
      }
      throw .io(path: path, operation: "create", reason: String(cString: strerror(code)))
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      _ = posixClose(descriptor)
      descriptor = -1
      throw .destinationExists(path: path, reason: "is being written by another process")
    }
  }

  /// Removes `path` if it is a stale temporary file (see ``init(creatingExclusively:staleIf:)``), else throws.
  private static func removeStale(_ path: String, isOurs: ([UInt8]) -> Bool) throws(LogError) {
    func refuse(_ reason: String) -> LogError {
      .destinationExists(path: path, reason: reason + ": it is not replaced; remove it if it is not needed")
    }
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == ELOOP { throw refuse("exists and is a symbolic link") }
      throw refuse("exists and cannot be opened (\(String(cString: strerror(code))))")
    }
    defer { _ = posixClose(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
      throw refuse("exists and is not a regular file")
    }
    guard status.st_uid == geteuid() else { throw refuse("exists and belongs to another user") }
    guard status.st_nlink == 1 else { throw refuse("exists and has other hard links") }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      throw .destinationExists(path: path, reason: "is being written by another process")
    }
    var start = [UInt8](repeating: 0, count: 64)
    let count = start.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
    guard count >= 0, count == 0 || isOurs(Array(start.prefix(count))) else {
      throw refuse("exists and is not an unfinished export")
    }
    // Unlinking removes the name only: whatever it points to is never touched.
    guard unlink(path) == 0 || errno == ENOENT else {
      throw .io(path: path, operation: "remove the stale", reason: String(cString: strerror(errno)))
    }
  }

  /// Whether `start` is how an export file starts (its header line).
  static func isExportStart(_ start: [UInt8]) -> Bool {
    let marker = Array(#"{"chronicleExport":"#.utf8)
    return start.count >= marker.count ? start.starts(with: marker) : marker.starts(with: start)
  }

  mutating func write(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = posixWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          throw LogError.io(path: path, operation: "write to", reason: String(cString: strerror(errno)))
        }
        offset += written
      }
    }
  }

  mutating func syncAndClose() throws(LogError) {
    defer { close() }
    guard fsync(descriptor) == 0 else {
      throw LogError.io(path: path, operation: "sync", reason: String(cString: strerror(errno)))
    }
  }

  mutating func close() {
    if descriptor >= 0 { _ = posixClose(descriptor) }
    descriptor = -1
  }

  /// Renames `source` to `destination` and syncs the directory, so the new name survives a power loss.
  static func rename(_ source: String, to destination: String) throws(LogError) {
    guard posixRename(source, destination) == 0 else {
      throw LogError.io(
        path: destination, operation: "rename \(source) to", reason: String(cString: strerror(errno)))
    }
    syncDirectory((destination as NSString).deletingLastPathComponent)
  }

  /// Gives `source` the name `destination` without ever replacing a file there (`link(2)`,
  /// then unlinking `source`; `rename(2)` after a check where the file system has no hard links).
  static func publish(_ source: String, as destination: String) throws(LogError) {
    if link(source, destination) == 0 {
      unlink(source)
      syncDirectory((destination as NSString).deletingLastPathComponent)
      return
    }
    let code = errno
    guard code != EEXIST else {
      throw .destinationExists(path: destination, reason: "already exists: an export never replaces a file")
    }
    var status = stat()
    guard lstat(destination, &status) != 0 else {
      throw .destinationExists(path: destination, reason: "already exists: an export never replaces a file")
    }
    try rename(source, to: destination)
  }

  /// Syncs a directory's entries (best effort: some file systems refuse it).
  static func syncDirectory(_ path: String) {
    let fd = open(path.isEmpty ? "." : path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    _ = posixClose(fd)
  }

  /// Syncs an existing file's contents.
  static func sync(_ path: String) throws(LogError) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      throw LogError.io(path: path, operation: "open", reason: String(cString: strerror(errno)))
    }
    defer { _ = posixClose(fd) }
    guard fsync(fd) == 0 else {
      throw LogError.io(path: path, operation: "sync", reason: String(cString: strerror(errno)))
    }
  }
}

/// The C functions whose names the file types above shadow.
@inline(__always) private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
  write(fd, buffer, count)
}
@inline(__always) private func posixClose(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func posixRename(_ source: String, _ destination: String) -> Int32 {
  rename(source, destination)
}
