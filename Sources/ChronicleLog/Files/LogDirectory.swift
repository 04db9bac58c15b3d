import Foundation
import ChronicleLMDB

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

  /// What the file system says a log directory is: its device and inode numbers, which every
  /// spelling of its path shares; the per-process registry of writer locks keys on it.
  typealias Identity = FileIdentity

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
    DataFile.newestMetaPage(atPath: dataPath)?.transactionID
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
    // The meta pages first, the size after: a writer in another process writes a transaction's
    // pages before the meta page that names them, so the file already holds every page of the
    // meta read here. (Sizing first let a commit land in between, and a growing log looked truncated.)
    let head = [UInt8]((try? handle.read(upToCount: DataFile.headSize)) ?? Data())
    let fileSize = (try? handle.seekToEnd()).map(Int.init) ?? 0
    if fileSize == 0 { throw .notALog(path: logPath, reason: "\(dataFile) is empty") }
    if fileSize < 4096 { throw .notALog(path: logPath, reason: "\(dataFile) is truncated (\(fileSize) bytes)") }
    // LMDB keeps two meta pages and uses the one with the newer transaction id.
    guard let newest = DataFile.newest(DataFile.metaPages(inHead: head)) else {
      throw .notALog(path: logPath, reason: "\(dataFile) is not an LMDB file (no LMDB magic number)")
    }
    let needed = newest.requiredSize
    guard fileSize >= needed else {
      throw .notALog(
        path: logPath, reason: "\(dataFile) is truncated: \(fileSize) bytes, but its pages need \(needed)")
    }
  }
}
