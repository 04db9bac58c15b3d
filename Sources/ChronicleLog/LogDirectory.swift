import Foundation

/// Checks a log directory before LMDB touches it, so that bad input gets a
/// clear error and nothing is created or changed.
enum LogDirectory {
  static let dataFile = "data.mdb"
  static let lockFile = "lock.mdb"
  static let writerLockFile = "chronicle.lock"

  struct Layout {
    /// The directory with symbolic links resolved: one key per log for locks and environments.
    var canonicalPath: String
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
    return Layout(
      canonicalPath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path,
      hasDataFile: hasDataFile, hasLockFile: fileManager.fileExists(atPath: path + "/" + lockFile),
      hasWriterLockFile: fileManager.fileExists(atPath: path + "/" + writerLockFile),
      lockPath: path + "/" + writerLockFile)
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
