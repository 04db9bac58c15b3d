import Crypto
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A witness that keeps the newest checkpoint it cosigned for each origin in a directory of its
/// own, one file per origin (`<hex SHA-256 of the origin>.checkpoint`, the signed note's bytes),
/// replaced durably (written to a temporary file, synced, renamed, directory synced).
///
/// Several processes (or instances) may share one directory: each check and replacement of an
/// origin's checkpoint happens under an exclusive `flock(2)` on that origin's lock file
/// (`<hex SHA-256 of the origin>.lock`), so none of them loses or regresses another's newest
/// checkpoint, and none cosigns a checkpoint inconsistent with the one stored.
///
/// ```swift
/// let witness = try FileWitness(directory: url, signer: witnessKey, logs: [origin: logVerifier])
/// let cosignature = try witness.add(checkpoint: note, oldSize: 0, consistencyProof: [])
/// ```
///
/// An instance serializes its own calls; the lock file serializes instances and processes.
public final class FileWitness: CheckpointWitness {
  /// The witness's directory.
  public let directory: URL
  /// The witness's cosigning key (type ``NoteKeyType/cosignatureV1``).
  public let signer: NoteSigner
  /// The logs it witnesses: origin → the log's checkpoint verifier.
  public let logs: [String: NoteVerifier]
  /// The clock the cosignatures' timestamps come from, seconds since 1970.
  let clock: @Sendable () -> UInt64
  private let lock = Mutex(())

  /// A witness storing its state in `directory` (created with mode 0700 when missing).
  ///
  /// - Throws: ``TreeError/malformedKey(_:)`` when `signer` is not a cosignature key,
  ///   ``LogError/io(path:operation:reason:)`` when the directory cannot be created.
  public convenience init(directory: URL, signer: NoteSigner, logs: [String: NoteVerifier]) throws {
    try self.init(directory: directory, signer: signer, logs: logs) { UInt64(Date().timeIntervalSince1970) }
  }

  init(
    directory: URL, signer: NoteSigner, logs: [String: NoteVerifier], clock: @escaping @Sendable () -> UInt64
  ) throws {
    guard signer.verifier.type == .cosignatureV1 else {
      throw TreeError.malformedKey("the witness key '\(signer.name)' is not a cosignature key (type 0x04)")
    }
    self.directory = directory.standardizedFileURL
    self.signer = signer
    self.logs = logs
    self.clock = clock
    do {
      try FileManager.default.createDirectory(
        at: self.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw LogError.io(path: self.directory.path, operation: "create the directory", reason: "\(error.localizedDescription)")
    }
  }

  /// The newest checkpoint the witness cosigned for `origin`, if any.
  public func latest(origin: String) throws -> SignedNote? {
    try lock.withLock { _ in try load(origin: origin) }
  }

  /// See ``CheckpointWitness/add(checkpoint:oldSize:consistencyProof:)``.
  public func add(checkpoint note: SignedNote, oldSize: UInt64, consistencyProof: [[UInt8]]) throws -> Cosignature {
    let checkpoint: Checkpoint
    do { checkpoint = try Checkpoint(parsing: note.text) } catch {
      throw TreeError.witnessRefused(origin: "?", reason: "\(error)")
    }
    let origin = checkpoint.origin
    func refuse(_ reason: String) -> TreeError { .witnessRefused(origin: origin, reason: reason) }
    guard let verifier = logs[origin] else { throw refuse("the witness does not know this origin") }
    do { try note.verify(by: verifier) } catch { throw refuse("\(error)") }
    return try lock.withLock { _ in
      try withFileLock(origin: origin) {
        if let held = try load(origin: origin) {
          let old = try Checkpoint(parsing: held.text)
          guard oldSize == old.size else {
            throw refuse("the old size \(oldSize) is not the size the witness holds (\(old.size))")
          }
          guard checkpoint.size >= old.size else {
            throw refuse("the checkpoint of size \(checkpoint.size) is older than the one held (\(old.size))")
          }
          do {
            try MerkleTree.verifyConsistency(
              oldSize: old.size, newSize: checkpoint.size, oldRoot: old.rootHash, newRoot: checkpoint.rootHash,
              proof: consistencyProof)
          } catch {
            throw refuse("it is not consistent with the checkpoint of size \(old.size) the witness holds: \(error)")
          }
        } else if oldSize != 0 {
          throw refuse("the old size \(oldSize) is not the size the witness holds (none: 0)")
        }
        let cosignature = try Cosignature.sign(checkpointText: note.text, timestamp: clock(), with: signer)
        try store(note, origin: origin)
        return cosignature
      }
    }
  }

  // MARK: - Files

  private func file(origin: String) -> String {
    directory.path + "/" + Array(SHA256.hash(data: Array(origin.utf8))).hex + ".checkpoint"
  }

  /// Runs `body` holding the exclusive `flock` of `origin`'s lock file (created mode 0600),
  /// waiting for another process or instance that holds it.
  private func withFileLock<R>(origin: String, _ body: () throws -> R) throws -> R {
    let path = directory.path + "/" + Array(SHA256.hash(data: Array(origin.utf8))).hex + ".lock"
    let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw LogError.io(path: path, operation: "open the witness's lock file", reason: String(cString: strerror(errno)))
    }
    defer { close(descriptor) }
    while flock(descriptor, LOCK_EX) != 0 {
      guard errno == EINTR else {
        throw LogError.io(path: path, operation: "lock the witness's lock file", reason: String(cString: strerror(errno)))
      }
    }
    // Unlocked explicitly: a child forked meanwhile shares the descriptor until it execs.
    defer { flock(descriptor, LOCK_UN) }
    return try body()
  }

  private func load(origin: String) throws -> SignedNote? {
    let path = file(origin: origin)
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    do { return try SignedNote(parsing: Array(data)) } catch {
      throw TreeError.witnessRefused(origin: origin, reason: "the witness's own file \(path) is unreadable: \(error)")
    }
  }

  private func store(_ note: SignedNote, origin: String) throws {
    let path = file(origin: origin)
    let temporary = path + ".tmp"
    var out = try DurableFile(creatingExclusively: temporary) { _ in true }
    do {
      try out.write(note.formatted)
      try out.syncAndClose()
    } catch {
      out.close()
      unlink(temporary)
      throw error
    }
    try DurableFile.rename(temporary, to: path)
  }
}
