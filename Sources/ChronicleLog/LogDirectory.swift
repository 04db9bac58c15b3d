import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Checks a log directory before LMDB touches it, so that bad input gets a
/// clear error and nothing is created or changed.
enum LogDirectory {
  static let dataFile = "data.mdb"
  static let lockFile = "lock.mdb"
  static let writerLockFile = "chronicle.lock"

  /// What the file system says a log directory is: its device and inode numbers.
  ///
  /// Every spelling of a directory's path (through symbolic links, with `..`
  /// components or a trailing slash, `/tmp` and `/private/tmp` on macOS) names one
  /// identity, so the per-process registries of writer locks and environments key on it.
  struct Identity: Hashable, Sendable, CustomStringConvertible {
    var device: UInt64
    var inode: UInt64

    /// The identity of the file or directory at `path` (following symbolic links), or `nil`.
    init?(path: String) {
      var info = stat()
      guard stat(path, &info) == 0 else { return nil }
      device = UInt64(truncatingIfNeeded: info.st_dev)
      inode = UInt64(truncatingIfNeeded: info.st_ino)
    }

    /// `device:inode`.
    var description: String { "\(device):\(inode)" }
  }

  struct Layout {
    /// The directory with symbolic links, `.` and `..` resolved (`realpath(3)`): the path errors name.
    var canonicalPath: String
    /// The directory's device and inode: the key of the per-process registries.
    var identity: Identity
    var hasDataFile: Bool
    var hasLockFile: Bool
    var hasWriterLockFile: Bool
    var lockPath: String
  }

  static func prepare(path: String, access: ActionLog.Access, createIfMissing: Bool) throws(LogError) -> Layout {
    let fileManager = FileManager.default
    var isDirectory: ObjCBool = false
    if !fileManager.fileExists(atPath: path, isDirectory: &isDirectory) {
      guard access == .readWrite, createIfMissing else { throw .noSuchLog(path: path) }
      do {
        try fileManager.createDirectory(
          atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      } catch {
        throw .permissionDenied(path: path, operation: "creating the directory")
      }
      isDirectory = true
    }
    guard isDirectory.boolValue else { throw .notADirectory(path: path) }
    guard fileManager.isReadableFile(atPath: path), fileManager.isExecutableFile(atPath: path) else {
      throw .permissionDenied(path: path, operation: "reading")
    }

    let dataPath = path + "/" + dataFile
    let hasDataFile = fileManager.fileExists(atPath: dataPath)
    if hasDataFile {
      try checkDataFile(dataPath, logPath: path)
    } else if access == .readOnly {
      throw .notALog(path: path, reason: "it holds no \(dataFile)")
    } else {
      let contents = (try? fileManager.contentsOfDirectory(atPath: path)) ?? []
      let foreign = contents.filter { ![lockFile, writerLockFile].contains($0) }
      guard foreign.isEmpty else {
        throw .notALog(
          path: path,
          reason: "the directory holds other files (\(foreign.sorted().prefix(3).joined(separator: ", "))) and no \(dataFile)")
      }
    }
    if access == .readWrite, !fileManager.isWritableFile(atPath: path) {
      throw .permissionDenied(path: path, operation: "writing to")
    }
    guard let canonicalPath = resolvedPath(path), let identity = Identity(path: canonicalPath) else {
      throw .noSuchLog(path: path)
    }
    return Layout(
      canonicalPath: canonicalPath, identity: identity,
      hasDataFile: hasDataFile, hasLockFile: fileManager.fileExists(atPath: canonicalPath + "/" + lockFile),
      hasWriterLockFile: fileManager.fileExists(atPath: canonicalPath + "/" + writerLockFile),
      lockPath: canonicalPath + "/" + writerLockFile)
  }

  /// The id of the newest transaction committed to the LMDB data file at `dataPath` (from its meta pages), or `nil`.
  static func lastTransactionID(ofDataFile dataPath: String) -> UInt64? {
    guard let handle = FileHandle(forReadingAtPath: dataPath) else { return nil }
    defer { try? handle.close() }
    let head = [UInt8]((try? handle.read(upToCount: 2 * 65_536)) ?? Data())
    guard let meta = LMDBMetaPage(head, at: 0) else { return nil }
    return LMDBMetaPage(head, at: meta.pageSize).map { max($0.transactionID, meta.transactionID) }
      ?? meta.transactionID
  }

  /// `path` with every symbolic link, `.` and `..` resolved by the file system (`realpath(3)`).
  static func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// Refuses empty, truncated and non-LMDB data files before LMDB would
  /// initialise them (emptying the log) or map pages past their end (a bus error).
  private static func checkDataFile(_ dataPath: String, logPath: String) throws(LogError) {
    guard let handle = FileHandle(forReadingAtPath: dataPath) else {
      throw .permissionDenied(path: dataPath, operation: "reading")
    }
    defer { try? handle.close() }
    let fileSize = (try? handle.seekToEnd()).map(Int.init) ?? 0
    try? handle.seek(toOffset: 0)
    let head = [UInt8]((try? handle.read(upToCount: 2 * 65_536)) ?? Data())
    if fileSize == 0 { throw .notALog(path: logPath, reason: "\(dataFile) is empty") }
    if fileSize < 4096 { throw .notALog(path: logPath, reason: "\(dataFile) is truncated (\(fileSize) bytes)") }
    guard let meta = LMDBMetaPage(head, at: 0) else {
      throw .notALog(path: logPath, reason: "\(dataFile) is not an LMDB file (no LMDB magic number)")
    }
    // LMDB keeps two meta pages and uses the one with the newer transaction id.
    let newest = LMDBMetaPage(head, at: meta.pageSize).map { $0.transactionID > meta.transactionID ? $0 : meta } ?? meta
    let needed = (newest.lastPage + 1) * newest.pageSize
    guard fileSize >= needed else {
      throw .notALog(
        path: logPath, reason: "\(dataFile) is truncated: \(fileSize) bytes, but its pages need \(needed)")
    }
  }
}

/// The fields of an LMDB meta page (`MDB_meta` after the 16-byte page header, 64-bit layout)
/// that tell whether the file is complete.
private struct LMDBMetaPage {
  var pageSize: Int
  var lastPage: Int
  var transactionID: UInt64

  init?(_ bytes: [UInt8], at offset: Int) {
    func load<T: FixedWidthInteger>(_ position: Int, _: T.Type) -> T? {
      let start = offset + position
      guard start >= 0, start + MemoryLayout<T>.size <= bytes.count else { return nil }
      return bytes[start..<(start + MemoryLayout<T>.size)].withUnsafeBytes { $0.loadUnaligned(as: T.self) }
    }
    // Page header (16) + mm_magic (4) + mm_version (4) + mm_address (8) + mm_mapsize (8): the free
    // database's MDB_db starts at 40; its md_pad holds the page size. mm_last_pg at 136, mm_txnid at 144.
    guard load(16, UInt32.self) == 0xBEEF_C0DE,
      let pageSize = load(40, UInt32.self), pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0,
      let lastPage = load(136, UInt64.self), lastPage < UInt64(Int.max) / UInt64(pageSize),
      let transactionID = load(144, UInt64.self)
    else { return nil }
    self.pageSize = Int(pageSize)
    self.lastPage = Int(lastPage)
    self.transactionID = transactionID
  }
}
