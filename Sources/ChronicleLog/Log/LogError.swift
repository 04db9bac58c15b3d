import Foundation
import ChronicleLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What went wrong with a log, naming the path and, where there is one, the sequence number.
///
/// ```swift
/// do { let log = try ActionLog(directory: url) }
/// catch LogError.locked(let path) { print("another writer has \(path) open") }
/// ```
public enum LogError: Error, CustomStringConvertible, LocalizedError {
  /// Nothing exists at `path` (and the log was opened without creating one).
  case noSuchLog(path: String)
  /// `path` exists but is not a directory.
  case notADirectory(path: String)
  /// `path` holds something that is not a Chronicle log; `reason` says what was found.
  case notALog(path: String, reason: String)
  /// The log was written by a newer format version than this library reads.
  case newerFormat(path: String, found: UInt32, supported: UInt32)
  /// The log was created by another app than the one opening it.
  case appMismatch(path: String, expected: String, found: String)
  /// Another writer (this process or another) holds the log open for writing.
  case locked(path: String)
  /// The log's last entry is not the one this writer appended last: another process wrote to it
  /// (through a hard link to `data.mdb`, or after `chronicle.lock` was deleted). Nothing was written.
  case changedByAnotherWriter(path: String, expectedLast: UInt64, foundLast: UInt64?)
  /// A writer opened the log while this reader reads it without LMDB's reader table (a user who
  /// cannot write the directory): the reader stops rather than read pages the writer may reuse.
  case writerAppeared(path: String)
  /// The log is the leftover of an import that was stopped before it completed.
  case unfinishedImport(path: String)
  /// A write failed because the file system that holds `path` is full. Nothing was committed.
  case noSpace(path: String, available: UInt64)
  /// The operating system refused access.
  case permissionDenied(path: String, operation: String)
  /// A write was attempted on a log opened read-only.
  case readOnly(path: String)
  /// The log was closed.
  case closed(path: String)
  /// A stored entry violates the format; `seq` names it.
  case corruptEntry(path: String, seq: UInt64, reason: String)
  /// A stored snapshot violates the format or does not match the chain.
  case corruptSnapshot(path: String, seq: UInt64, reason: String)
  /// Meta data is missing or malformed.
  case corruptMeta(path: String, reason: String)
  /// A request names a sequence number the log does not hold.
  case noSuchEntry(path: String, seq: UInt64)
  /// A value did not fit the format (a type name over 65,535 bytes, for example).
  case invalidEntry(reason: String)
  /// A payload failed to encode or decode with its codec.
  case codec(codec: PayloadCodec, typeName: String, underlying: any Error)
  /// LMDB reported an error.
  case storage(LMDBError)
  /// A write failed because the file would grow beyond the process's file size limit
  /// (`RLIMIT_FSIZE`, `ulimit -f`), `limit` bytes. Nothing was committed.
  case fileTooLarge(path: String, limit: UInt64)
  /// The log is open read-only elsewhere in this process, so it cannot be opened for writing here:
  /// a process shares one LMDB environment per log. Close the read-only instances first.
  case openReadOnlyInThisProcess(path: String)

  // MARK: - Encryption

  /// A key, a key ring or a key file is unusable; `reason` says why (never the key itself).
  case invalidKey(reason: String)
  /// Entry `seq` is encrypted with the key `keyID`, which the key ring does not hold (or no ring was given).
  case keyMissing(path: String, seq: UInt64, keyID: UInt32)
  /// Entry `seq` did not decrypt with the key `keyID`: its ciphertext or clear header was changed,
  /// it was moved from another position or log, or the key given under that identifier is not the one that sealed it.
  case decryptionFailed(path: String, seq: UInt64, keyID: UInt32)
  /// The log's encryption and the options disagree: an encrypted log opened for writing without a
  /// key ring, or a log in the clear opened for writing with one.
  case encryptionMismatch(path: String, reason: String)
  /// The snapshot at `seq` is encrypted with the key `keyID`, which the key ring does not hold (or
  /// no ring was given). Readers looking for a snapshot skip it for an older one, as a damaged one.
  case snapshotKeyMissing(path: String, seq: UInt64, keyID: UInt32)
  /// The snapshot at `seq` did not decrypt with the key `keyID`: its ciphertext or clear header was
  /// changed, or the key given under that identifier is not the one that sealed it. Readers looking
  /// for a snapshot skip it for an older one, as a damaged one.
  case snapshotDecryptionFailed(path: String, seq: UInt64, keyID: UInt32)

  // MARK: - Export, import and compaction

  /// A line of an export is malformed, out of order, or does not match the hash chain
  /// (`line` 0 when the problem is with the file as a whole).
  case invalidExport(path: String, line: Int, seq: UInt64?, reason: String)
  /// The destination of an export, import or archive cannot be used: it exists and is not
  /// the transfer's own (a file, a non-empty directory, a symbolic link, another export's
  /// temporary file); nothing was written there.
  case destinationExists(path: String, reason: String)
  /// The operating system refused a file operation of an export, import or compaction.
  case io(path: String, operation: String, reason: String)
  /// A compaction found no intact snapshot at or before the requested sequence number
  /// (nor after the anchor) to cut at. Nothing was changed.
  case noSnapshot(path: String, atOrBefore: UInt64)
  /// A compaction refused a log that does not verify: it would bake the problems into the anchor.
  case logHasProblems(path: String, report: VerificationReport)
  /// A compaction refused a cut that would remove the state an undo, redo or restore entry
  /// after the newest snapshot (`seq`) returns to (the state after `target`, before the cut
  /// `cut`): the log could no longer be opened. Nothing was changed; cut at or before `target`.
  case jumpAcrossCut(path: String, seq: UInt64, target: UInt64, cut: UInt64)

  /// One line that says what and where.
  public var description: String {
    switch self {
    case .noSuchLog(let path): "no log at \(path): the path does not exist"
    case .notADirectory(let path): "\(path) is not a directory: a Chronicle log is a directory"
    case .notALog(let path, let reason): "\(path) is not a Chronicle log: \(reason)"
    case .newerFormat(let path, let found, let supported):
      "\(path) was written in log format \(found); this version reads format \(supported) and older"
    case .appMismatch(let path, let expected, let found):
      "\(path) belongs to app '\(found)', not '\(expected)'"
    case .locked(let path): "\(path) is locked: another writer has it open (read-only access still works)"
    case .changedByAnotherWriter(let path, let expected, let found):
      "\(path) was changed by another writer: this writer appended up to entry \(expected), but the log now ends at "
        + "\(found.map { "entry \($0)" } ?? "no entry"); nothing was written. Close it and stop the other process "
        + "(a deleted chronicle.lock or a hard link to data.mdb let it in)"
    case .noSpace(let path, let available):
      "no space left for \(path): its file system has \(available) bytes free; free some space and try again "
        + "(nothing was committed)"
    case .unfinishedImport(let path):
      "\(path) is an unfinished import: the import that built it was stopped before it completed, so it may hold "
        + "only part of its export; remove it and import again"
    case .writerAppeared(let path):
      "a writer opened \(path) while this process reads it without LMDB's reader table (it cannot write the "
        + "directory, so it has no lock.mdb): it stopped rather than read pages the writer may reuse; read it as a "
        + "user who can write the directory, or while no app has it open"
    case .permissionDenied(let path, let operation): "permission denied \(operation) \(path)"
    case .readOnly(let path): "\(path) is open read-only"
    case .closed(let path): "the log at \(path) is closed"
    case .corruptEntry(let path, let seq, let reason): "entry \(seq) of \(path) is corrupt: \(reason)"
    case .corruptSnapshot(let path, let seq, let reason): "snapshot at \(seq) of \(path) is corrupt: \(reason)"
    case .corruptMeta(let path, let reason): "the meta data of \(path) is corrupt: \(reason)"
    case .noSuchEntry(let path, let seq): "\(path) has no entry \(seq)"
    case .invalidEntry(let reason): "invalid entry: \(reason)"
    case .codec(let codec, let typeName, let underlying):
      "\(codec) codec failed on '\(typeName)': \(underlying)"
    case .storage(let error): error.description
    case .fileTooLarge(let path, let limit):
      "file too large: \(path) would grow beyond the process's file size limit of \(limit) bytes "
        + "(RLIMIT_FSIZE, ulimit -f); nothing was committed"
    case .openReadOnlyInThisProcess(let path):
      "\(path) is open read-only elsewhere in this process: close those read-only instances "
        + "before opening it for writing (a process shares one LMDB environment per log)"
    case .invalidKey(let reason): "invalid key: \(reason)"
    case .keyMissing(let path, let seq, let keyID):
      "entry \(seq) of \(path) is encrypted with key \(EncryptionKey.text(keyID)), which the key ring does not hold"
    case .decryptionFailed(let path, let seq, let keyID):
      "entry \(seq) of \(path) does not decrypt with key \(EncryptionKey.text(keyID)): its ciphertext or header "
        + "was changed or moved from another position, or the key is not the one that sealed it"
    case .encryptionMismatch(let path, let reason): "cannot write to \(path): \(reason)"
    case .snapshotKeyMissing(let path, let seq, let keyID):
      "snapshot at \(seq) of \(path) is encrypted with key \(EncryptionKey.text(keyID)), which the key ring does not hold"
    case .snapshotDecryptionFailed(let path, let seq, let keyID):
      "snapshot at \(seq) of \(path) does not decrypt with key \(EncryptionKey.text(keyID)): its ciphertext or "
        + "header was changed, or the key is not the one that sealed it"
    case .invalidExport(let path, 0, let seq?, let reason): "\(path) (entry \(seq)): \(reason)"
    case .invalidExport(let path, 0, nil, let reason): "\(path): \(reason)"
    case .invalidExport(let path, let line, let seq?, let reason): "\(path) line \(line) (entry \(seq)): \(reason)"
    case .invalidExport(let path, let line, nil, let reason): "\(path) line \(line): \(reason)"
    case .destinationExists(let path, let reason): "\(path) \(reason)"
    case .io(let path, let operation, let reason): "cannot \(operation) \(path): \(reason)"
    case .noSnapshot(let path, let seq):
      "\(path) has no snapshot at or before entry \(seq) to cut at: compaction keeps every entry after a snapshot"
    case .jumpAcrossCut(let path, let seq, let target, let cut):
      "cannot cut \(path) at entry \(cut): entry \(seq) returns to the state after entry \(target), "
        + "which the cut would remove; cut at or before entry \(target)"
    case .logHasProblems(let path, let report):
      "\(path) does not verify (\(report.problems.count) problems, first bad entry "
        + "\(report.firstBadSeq.map(String.init) ?? "none")): it is not compacted"
    }
  }

  /// The same sentence as ``description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}

// MARK: - CBORError

extension CBORError: LocalizedError {
  /// The same sentence as ``/ChronicleCBOR/CBORError/description``, so that `localizedDescription` reads well.
  public var errorDescription: String? { description }
}

/// Runs `body`, turning `LMDBError`s into `LogError.storage`.
@inline(__always)
func storage<R>(_ body: () throws -> R) throws(LogError) -> R {
  do {
    return try body()
  } catch let error as LogError {
    throw error
  } catch let error as LMDBError {
    if let limit = LogError.fileSizeLimit(error) ?? LogError.spaceLimit(error) { throw limit }
    throw .storage(error)
  } catch {
    throw .invalidEntry(reason: "\(error)")
  }
}

extension LogError {
  /// ``fileTooLarge(path:limit:)`` for a write error LMDB reports when the process's file size
  /// limit stopped it: `EFBIG`, or `EIO` (LMDB's word for a short write) while a limit is set.
  static func fileSizeLimit(_ error: LMDBError) -> LogError? {
    guard error.code.rawValue == EFBIG || error.code.rawValue == EIO else { return nil }
    var limit = rlimit()
    #if os(Linux)
      let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
      let infinity = rlim_t.max
    #else
      let resource = RLIMIT_FSIZE
      let infinity = RLIM_INFINITY
    #endif
    guard getrlimit(resource, &limit) == 0, limit.rlim_cur != infinity else { return nil }
    return .fileTooLarge(path: directory(of: error) + "/data.mdb", limit: UInt64(limit.rlim_cur))
  }

  /// ``noSpace(path:available:)`` for a write error LMDB reports when the file system is full:
  /// `ENOSPC`, or `EIO` (LMDB's word for a short write) while less than a mebibyte is free there.
  static func spaceLimit(_ error: LMDBError) -> LogError? {
    guard error.code.rawValue == ENOSPC || error.code.rawValue == EIO else { return nil }
    let path = directory(of: error)
    var status = statvfs()
    guard statvfs(path, &status) == 0 else { return nil }
    let available = UInt64(status.f_bavail) * UInt64(status.f_frsize)
    guard error.code.rawValue == ENOSPC || available < 1 << 20 else { return nil }
    return .noSpace(path: path, available: available)
  }

  /// The environment's directory an LMDB error names: its operations end with it ("committing a
  /// transaction on PATH", "put in 'entries' (PATH)").
  private static func directory(of error: LMDBError) -> String {
    let operation = error.operation
    if operation.hasSuffix(")"), let open = operation.range(of: " (", options: .backwards) {
      return String(operation[open.upperBound...].dropLast())
    } else if let on = operation.range(of: " on ", options: .backwards) {
      return String(operation[on.upperBound...])
    }
    return operation
  }
}
