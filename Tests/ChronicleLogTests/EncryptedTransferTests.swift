import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// Export, import, compaction and salvage of encrypted logs: records travel as stored (ciphertext),
/// so archives verify without the key and import byte for byte; compaction needs the ring only to
/// leave a snapshot that opens.
@Suite struct EncryptedTransferTests {
  private let signer = try! NoteSigner(name: "chronicle.test/encrypted", seed: Array(repeating: 9, count: 32))
  /// The payload text of entry `n`: what must never appear in a file in the clear.
  private func secret(_ n: UInt64) -> String { "secret-payload-\(n)" }

  /// Appends entries up to `last` with `ring`, a snapshot at each of `snapshots` and a signed
  /// checkpoint at each of `checkpoints`.
  private func grow(
    _ log: ActionLog, to last: UInt64, snapshots: Set<UInt64> = [], checkpoints: Set<UInt64> = []
  ) throws {
    var seq = try log.head().seq
    while seq < last {
      seq += 1
      try log.append(
        try NewEntry(encoding: secret(seq), typeName: "note", metadata: ["by": "ann-\(seq)"], codec: .json))
      if snapshots.contains(seq) {
        try log.writeSnapshot(at: seq, state: Array("state-\(seq)".utf8), codec: .json, schemaVersion: 1)
      }
      if checkpoints.contains(seq) { try log.signCheckpoint(with: signer) }
    }
  }

  /// An encrypted log of 60 entries: key `old` seals 1…30, then the ring rotates to `new` with
  /// sealed type names for 31…60; snapshots at 20 (`old`), 30 and 45 (`new`: the one at 30 follows
  /// an entry `old` sealed), checkpoints at 25 and 60.
  private func makeLog(at url: URL, old: EncryptionKey, new: EncryptionKey) throws {
    var log = try ActionLog(
      directory: url, options: .init(durability: .full, appID: "vault", keyRing: try KeyRing([old])))
    try grow(log, to: 30, snapshots: [20], checkpoints: [25])
    try log.close()
    log = try ActionLog(
      directory: url,
      options: .init(durability: .full, appID: "vault", keyRing: try KeyRing([old, new], sealsTypeNames: true)))
    try log.writeSnapshot(at: 30, state: Array("state-30".utf8), codec: .json, schemaVersion: 1)
    try grow(log, to: 60, snapshots: [45], checkpoints: [60])
    try log.close()
  }

  /// Every database of the log, key by key: entries, snapshots, meta, tree and checkpoints.
  private func databases(_ url: URL) throws -> [[[UInt8]: [UInt8]]] {
    let dump = try RawDump(url)
    return [
      dump.entries, dump.snapshots, dump.meta, try RawDump.treeDatabase("tree", of: url),
      try RawDump.treeDatabase("checkpoints", of: url),
    ]
  }

  private func contains(_ file: URL, _ text: String) throws -> Bool {
    try Data(contentsOf: file).range(of: Data(text.utf8)) != nil
  }

  // MARK: - Export and import

  @Test func anEncryptedLogExportsAsCiphertextAndImportsByteForByte() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let (old, new) = (EncryptionKey.random(), EncryptionKey.random())
    let original = dir.child("original")
    try makeLog(at: original, old: old, new: new)

    // No key is needed to export: the records are carried as stored.
    let reader = try ActionLog(directory: original, access: .readOnly)
    let export = dir.child("vault.jsonl")
    let written = try reader.export(to: export)
    try reader.close()
    #expect(written.entries == 60)
    #expect(written.snapshots == [20, 30, 45])
    #expect(written.checkpoints == [25, 60])
    #expect(try !contains(export, secret(7)))
    #expect(try !contains(export, "ann-7"))
    let lines = try String(contentsOf: export, encoding: .utf8).split(separator: "\n")
    #expect(lines[0].contains("\"chronicleExport\":\(ActionLog.encryptedExportFormatVersion)"))
    #expect(lines[1].contains("\"typeName\":\"note\"") && lines[1].contains("\"keyID\":\"\(old.idText)\""))
    #expect(!lines[40].contains("typeName") && lines[40].contains("\"keyID\":\"\(new.idText)\""))

    #expect(try ActionLog.checkExport(at: export).entries == 60)
    let imported = dir.child("imported")
    let report = try ActionLog.importLog(from: export, into: imported)
    #expect(report.checkpoints == [25, 60])
    #expect(try databases(imported) == databases(original), "entries, snapshots, meta, tree and checkpoints")

    // Verifies without the key; reads with it; a wrong key is named.
    let blind = try ActionLog(directory: imported, access: .readOnly)
    #expect(blind.isEncrypted)
    #expect(try blind.verify().isValid)
    for size: UInt64 in [25, 60] {
      let note = try #require(try blind.checkpoints().first { try Checkpoint(parsing: $0.text).size == size })
      #expect(try blind.verify(checkpoint: note, verifier: signer.verifier).isValid)
    }
    try blind.close()
    let keyed = try ActionLog(
      directory: imported, access: .readOnly, options: .init(keyRing: try KeyRing([old, new])))
    #expect(try keyed.record(at: 7)?.payload == Array("\"\(secret(7))\"".utf8))
    #expect(try keyed.record(at: 50)?.typeName == "note")
    #expect(try keyed.snapshot(at: 45)?.state == Array("state-45".utf8))
    try keyed.close()
    let wrong = EncryptionKey.random()
    let wrongReader = try ActionLog(
      directory: imported, access: .readOnly, options: .init(keyRing: try KeyRing([wrong])))
    let wrongKey = #expect(throws: LogError.self) { try wrongReader.record(at: 7) }
    guard case .keyMissing(_, 7, let missing)? = wrongKey else {
      Issue.record("expected keyMissing for entry 7, got \(String(describing: wrongKey))")
      return
    }
    #expect(missing == old.id)
    #expect(wrongKey.map { "\($0)".contains(old.idText) } == true)
    try wrongReader.close()

    // The imported log goes on as the original would.
    let writer = try ActionLog(directory: imported, options: .init(keyRing: try KeyRing([old, new])))
    try grow(writer, to: 61)
    #expect(try writer.verify().isValid)
    try writer.close()
  }

  @Test func aChangedSealedLineIsRefusedByLineAndSeq() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let original = dir.child("original")
    try makeLog(at: original, old: .random(), new: .random())
    let reader = try ActionLog(directory: original, access: .readOnly)
    let export = dir.child("vault.jsonl")
    try reader.export(to: export)
    try reader.close()
    let text = try String(contentsOf: export, encoding: .utf8)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

    /// The refusal of the export with line `index` (0-based) changed by `change`.
    func refusal(_ index: Int, _ change: (String) -> String) throws -> String {
      var changed = lines
      changed[index] = change(lines[index])
      let file = dir.child("changed-\(UUID().uuidString.prefix(6)).jsonl")
      try changed.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
      do {
        try ActionLog.checkExport(at: file)
        return "accepted"
      } catch { return "\(error)" }
    }
    // A clear field that disagrees with the stored header (whose hash still checks).
    let timestamp = try refusal(3) { $0.replacingOccurrences(of: "\"timestamp\":", with: "\"timestamp\":1") }
    #expect(timestamp.contains("line 4") && timestamp.contains("entry 3") && timestamp.contains("'timestamp' differs"))
    let keyID = try refusal(3) { line in
      line.replacingOccurrences(of: #""keyID":"[0-9a-f]{8}""#, with: #""keyID":"00000000""#, options: .regularExpression)
    }
    #expect(keyID.contains("'keyID' differs"))
    // A changed ciphertext fails the hash.
    let sealed = try refusal(3) { line in
      let range = line.range(of: "\"sealedBase64\":\"")!
      var bytes = Data(base64Encoded: String(line[range.upperBound...].prefix { $0 != "\"" }))!
      bytes[bytes.count - 20] ^= 1
      return line.replacingOccurrences(
        of: #""sealedBase64":"[^"]*""#, with: "\"sealedBase64\":\"\(bytes.base64EncodedString())\"",
        options: .regularExpression)
    }
    #expect(sealed.contains("entry 3") && sealed.contains("recomputed hash differs"))
    // A clear entry line in an encrypted export, and the version that announces sealed lines.
    let clear = try refusal(3) { $0.replacingOccurrences(of: "\"sealedBase64\"", with: "\"payloadBase64\"") }
    #expect(clear.contains("no valid 'sealedBase64'"))
    let version = try refusal(0) { $0.replacingOccurrences(of: "\"chronicleExport\":3", with: "\"chronicleExport\":2") }
    #expect(version.contains("line 1") && version.contains("export format 2"))
    lines = []
  }

  // MARK: - Compaction

  @Test func compactionNeedsTheRingKeepsTheTreeAndCarriesTheSealedSnapshot() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let (old, new) = (EncryptionKey.random(), EncryptionKey.random())
    let log = dir.child("log")
    try makeLog(at: log, old: old, new: new)
    let before = try databases(log)
    let reader = try ActionLog(directory: log, access: .readOnly)
    let roots = try (UInt64(1)...60).map { try reader.treeRoot(size: $0) }
    let leaf50 = MerkleHash.leaf(seq: 50, value: try #require(try RawDump(log).entries[withUnsafeBytes(of: UInt64(50).bigEndian) { Array($0) }]))
    try reader.close()

    // Without the ring: one clear line, nothing changed (no archive either).
    let archive = dir.child("archive.jsonl")
    let noRing = #expect(throws: LogError.self) {
      try ActionLog.compact(directory: log, before: 50, disposal: .archive(archive), keyRing: nil)
    }
    guard case .encryptionMismatch(let path, let reason)? = noRing else {
      Issue.record("expected encryptionMismatch, got \(String(describing: noRing))")
      return
    }
    #expect(path == log.path && reason.contains("compaction needs its key ring") && !reason.contains("\n"))
    // A ring that opens no snapshot: the newest one is named with its key.
    let wrongRing = #expect(throws: LogError.self) {
      try ActionLog.compact(
        directory: log, before: 50, disposal: .archive(archive), keyRing: try KeyRing([.random()]))
    }
    guard case .snapshotKeyMissing(_, 45, let missing)? = wrongRing else {
      Issue.record("expected snapshotKeyMissing for the snapshot at 45, got \(String(describing: wrongRing))")
      return
    }
    #expect(missing == new.id)
    #expect(try databases(log) == before)
    #expect(!FileManager.default.fileExists(atPath: archive.path))

    // After crypto-shredding the old key, the ring of the new one compacts away the entries it
    // sealed, entry 30 at the cut included (its snapshot is sealed with the new key).
    let shredded = try ActionLog.compact(directory: log, before: 44, disposal: .discard, keyRing: try KeyRing([new]))
    #expect(shredded.cut == 30)
    #expect(shredded.entriesRemoved == 30)
    let report = try ActionLog.compact(
      directory: log, before: 50, disposal: .archive(archive), keyRing: try KeyRing([new]))
    #expect(report.cut == 45)
    #expect(report.entriesRemoved == 15)
    let after = try ActionLog(directory: log, access: .readOnly, options: .init(keyRing: try KeyRing([new])))
    #expect(try after.verify().isValid)
    #expect(try after.snapshot(at: 45)?.state == Array("state-45".utf8), "the snapshot at the anchor opens")
    #expect(try after.record(at: 46)?.payload == Array("\"\(secret(46))\"".utf8))
    for size in UInt64(45)...60 { #expect(try after.treeRoot(size: size) == roots[Int(size) - 1], "size \(size)") }
    try MerkleTree.verifyInclusion(
      leafHash: leaf50, index: 49, size: 60, proof: try after.inclusionProof(seq: 50, treeSize: 60), root: roots[59])
    try MerkleTree.verifyConsistency(
      oldSize: 25, newSize: 60, oldRoot: roots[24], newRoot: roots[59], proof: try after.consistencyProof(from: 25, to: 60))
    let note = try #require(try after.checkpoints().last)
    #expect(try after.verify(checkpoint: note, verifier: signer.verifier).isValid)
    try after.close()
    // The store's writer reopens from the sealed snapshot and goes on.
    let writer = try ActionLog(directory: log, options: .init(keyRing: try KeyRing([new])))
    try grow(writer, to: 62)
    try writer.close()

    // The archive holds ciphertext, verifies without a key, and imports as entries 31…45.
    #expect(try !contains(archive, secret(33)))
    let restored = dir.child("restored")
    try ActionLog.importLog(from: archive, into: restored)
    let prefix = try ActionLog(directory: restored, access: .readOnly, options: .init(keyRing: try KeyRing([old, new])))
    #expect(try prefix.verify().isValid)
    #expect(try prefix.bounds() == 31...45)
    #expect(try prefix.record(at: 33)?.payload == Array("\"\(secret(33))\"".utf8))
    #expect(try prefix.snapshot(at: 30)?.state == Array("state-30".utf8))
    #expect(try prefix.treeRoot(size: 45) == roots[44])
    try prefix.close()
  }

  // MARK: - Salvage

  @Test func salvageCopiesAnEncryptedLogAsStoredWithoutTheKey() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let (old, new) = (EncryptionKey.random(), EncryptionKey.random())
    let damaged = dir.child("damaged")
    try makeLog(at: damaged, old: old, new: new)
    // Damage: entry 50 is removed, so salvage keeps 1…49 and the snapshots at 20, 30 and 45.
    let environment = try Environment(path: damaged.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 8))
    let entries = try environment.openDatabase(named: "entries")
    try environment.write { txn in
      _ = try txn.delete(forKey: withUnsafeBytes(of: UInt64(50).bigEndian) { Array($0) }, in: entries)
    }
    environment.close()

    let copy = dir.child("copy")
    let report = try ActionLog.salvage(from: damaged, into: copy)
    #expect(report.head.seq == 49)
    #expect(report.snapshotsCopied == [20, 30, 45], "\(report.snapshotsLost)")
    #expect(report.checkpointsKept == [25])
    let original = try RawDump(damaged)
    let salvaged = try RawDump(copy)
    let survivors = original.entries.filter { $0.key.lexicographicallyPrecedes(withUnsafeBytes(of: UInt64(50).bigEndian) { Array($0) }) }
    #expect(survivors.count == 49)
    #expect(salvaged.entries == survivors, "every surviving entry, byte for byte")
    #expect(salvaged.snapshots == original.snapshots)
    let blind = try ActionLog(directory: copy, access: .readOnly)
    #expect(blind.isEncrypted)
    #expect(try blind.verify().isValid)
    try blind.close()
    let keyed = try ActionLog(directory: copy, access: .readOnly, options: .init(keyRing: try KeyRing([old, new])))
    #expect(try keyed.record(at: 49)?.payload == Array("\"\(secret(49))\"".utf8))
    #expect(try keyed.snapshot(at: 45)?.state == Array("state-45".utf8))
    try keyed.close()
    // A second run resumes into the same (encrypted) destination, which needs no key either.
    let again = try ActionLog.salvage(from: damaged, into: copy)
    #expect(again.head.seq == 49)
  }

  // MARK: - Rekey composes

  @Test func aRekeyedLogExportsAndCompacts() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let (old, new) = (EncryptionKey.random(), EncryptionKey.random())
    let log = dir.child("log")
    try makeLog(at: log, old: old, new: new)
    let fresh = try KeyRing([.random()])
    try ActionLog.rekey(directory: log, from: try KeyRing([old, new]), to: fresh)

    let export = dir.child("rekeyed.jsonl")
    let reader = try ActionLog(directory: log, access: .readOnly)
    try reader.export(to: export)
    try reader.close()
    #expect(try String(contentsOf: export, encoding: .utf8).contains("\"keyID\":\"\(fresh.current.idText)\""))
    let imported = dir.child("imported")
    try ActionLog.importLog(from: export, into: imported)
    #expect(try RawDump(imported) == RawDump(log))

    let report = try ActionLog.compact(directory: log, before: 60, disposal: .discard, keyRing: fresh)
    #expect(report.cut == 45)
    let after = try ActionLog(directory: log, access: .readOnly, options: .init(keyRing: fresh))
    #expect(try after.verify().isValid)
    #expect(try after.snapshot(at: 45)?.state == Array("state-45".utf8))
    #expect(try after.record(at: 60)?.payload == Array("\"\(secret(60))\"".utf8))
    try after.close()
  }
}
