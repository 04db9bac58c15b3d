import Crypto
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@_spi(Benchmarks) @testable import ChronicleLog

// MARK: - Helpers

/// A marker payload that must never appear in the clear in an encrypted log's file.
private let secret = "SECRET-IBAN-DE44500105175407324931"

private func secretEntry(_ n: Int) throws -> NewEntry {
  try NewEntry(
    encoding: ["iban": "\(secret)-\(n)", "note": "salary"], typeName: "transferSalary",
    metadata: ["user": "ann-\(secret)"], codec: n % 2 == 0 ? .json : .cbor)
}

private func options(_ ring: KeyRing?) -> ActionLog.Options {
  ActionLog.Options(durability: .full, flushInterval: nil, appID: "crypt", keyRing: ring)
}

/// Writes `count` secret entries and a snapshot at the last one, with `ring`.
private func writeEncryptedLog(at dir: TemporaryDirectory, ring: KeyRing, count: Int = 20) throws {
  let log = try ActionLog(directory: dir.url, options: options(ring))
  try log.append(contentsOf: (1...count).map { try secretEntry($0) })
  try log.writeSnapshot(
    at: UInt64(count), state: Array("{\"balance\":\"\(secret)\"}".utf8), codec: .json, schemaVersion: 1)
  try log.close()
}

private func fileBytes(_ dir: TemporaryDirectory) throws -> Data {
  try Data(contentsOf: dir.url.appendingPathComponent("data.mdb"))
}

private func stored(_ seq: UInt64, in dir: TemporaryDirectory) throws -> [UInt8] {
  let environment = try Environment(path: dir.url.path, configuration: .init(mapSize: 1 << 24, maxDatabases: 8))
  defer { environment.close() }
  let entries = try environment.openDatabase(named: "entries")
  return try #require(try environment.read { try $0.get(forKey: sequenceKey(seq), in: entries) })
}

/// Puts `value` under entry `seq`, optionally recomputing its chain hash from the stored one before
/// it (an attacker who also fixes the hash), so that only the decryption can catch the change.
private func putEntry(_ seq: UInt64, value: [UInt8], rehash: Bool, in dir: TemporaryDirectory) throws {
  let environment = try Environment(path: dir.url.path, configuration: .init(mapSize: 1 << 24, maxDatabases: 8))
  defer { environment.close() }
  let entries = try environment.openDatabase(named: "entries")
  try environment.write { txn in
    var value = value
    if rehash {
      let previous = seq > 1 ? Array(try #require(try txn.get(forKey: sequenceKey(seq - 1), in: entries)).suffix(32)) : Chain.genesis
      let body = Array(value.dropLast(32))
      value = body + body.withUnsafeBytes { Chain.hash(previous: previous, seq: seq, body: $0) }
    }
    try txn.put(value, forKey: sequenceKey(seq), in: entries)
  }
}

/// Expects `body` to throw `expected` (compared by its one-line description).
private func expectError(
  _ expected: LogError, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () throws -> Any?
) {
  let error = #expect(throws: LogError.self, comment, sourceLocation: sourceLocation) { _ = try body() }
  #expect(error?.description == expected.description, sourceLocation: sourceLocation)
}

// MARK: - Tests

@Suite struct EncryptionTests {
  @Test func encryptedLogRoundTripsAndHoldsNoPlaintext() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let key = EncryptionKey.random()
    let ring = try KeyRing([key])
    try writeEncryptedLog(at: dir, ring: ring)

    let log = try ActionLog(directory: dir.url, access: .readOnly, options: options(ring))
    defer { try? log.close() }
    #expect(log.isEncrypted)
    #expect(try log.meta().formatVersion == ActionLog.encryptedFormatVersion)
    let record = try #require(try log.record(at: 7))
    #expect(record.typeName == "transferSalary")
    #expect(record.metadata == ["user": "ann-\(secret)"])
    #expect(try record.codec.decode([String: String].self, from: record.payload)["iban"] == "\(secret)-7")
    var replayed = 0
    try log.scan(in: 1...20) { view in
      #expect(view.sealedKeyID == nil)
      #expect(String(decoding: view.payload, as: UTF8.self).contains(secret) || view.codec == .cbor)
      replayed += 1
    }
    #expect(replayed == 20)
    let snapshot = try #require(try log.snapshot(at: 20))
    #expect(String(decoding: snapshot.state, as: UTF8.self) == "{\"balance\":\"\(secret)\"}")

    // Neither payloads, metadata nor the snapshot's state are in the file.
    let file = try fileBytes(dir)
    #expect(file.range(of: Data(secret.utf8)) == nil)
    #expect(file.range(of: Data("salary".utf8)) == nil)
    // The type name is in the clear by default.
    #expect(file.range(of: Data("transferSalary".utf8)) != nil)
    // The key is not.
    #expect(file.range(of: Data(key.bytes)) == nil)
  }

  @Test func sealedTypeNamesLeaveNoTypeNameInTheFile() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()], sealsTypeNames: true)
    try writeEncryptedLog(at: dir, ring: ring, count: 5)
    #expect(try fileBytes(dir).range(of: Data("transferSalary".utf8)) == nil)
    let log = try ActionLog(directory: dir.url, access: .readOnly, options: options(ring))
    defer { try? log.close() }
    #expect(try log.record(at: 3)?.typeName == "transferSalary")
  }

  @Test func withoutTheKeyTheChainTreeAndCheckpointsStillVerify() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    try writeEncryptedLog(at: dir, ring: ring, count: 40)
    let signer = try NoteSigner(name: "crypt.example/log", seed: [UInt8](repeating: 7, count: 32))
    let writer = try ActionLog(directory: dir.url, options: options(ring))
    let checkpoint = try writer.signCheckpoint(with: signer)
    try writer.close()

    let reader = try ActionLog(directory: dir.url, access: .readOnly, options: options(nil))
    defer { try? reader.close() }
    let report = try reader.verify()
    #expect(report.isValid, "\(report.problems)")
    #expect(report.entriesChecked == 40)
    #expect(report.snapshotsChecked == 1)
    let check = try reader.verify(checkpoint: checkpoint, verifier: signer.verifier)
    #expect(check.isValid, "\(check)")
    let proof = try reader.inclusionProof(seq: 17, treeSize: 40)
    let value = try #require(try reader.storedValue(seq: 17))
    let root = try Checkpoint(parsing: checkpoint.text).rootHash
    try MerkleTree.verifyInclusion(
      leafHash: MerkleHash.leaf(seq: 17, value: value), index: 16, size: 40, proof: proof, root: root)
    // Reading content without the key names the key and the seq.
    expectError(LogError.keyMissing(path: reader.path, seq: 3, keyID: ring.current.id)) {
      try reader.record(at: 3)
    }
  }

  @Test func wrongMissingAndDamagedKeysNameTheKeyAndSeqAndChangeNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let key = EncryptionKey.random()
    try writeEncryptedLog(at: dir, ring: try KeyRing([key]), count: 5)
    let before = try fileBytes(dir)
    let path = dir.url.standardizedFileURL.path

    // Another key: the entry names the key it needs.
    let other = try ActionLog(directory: dir.url, access: .readOnly, options: options(try KeyRing([.random()])))
    expectError(LogError.keyMissing(path: other.path, seq: 2, keyID: key.id)) { try other.record(at: 2) }
    expectError(LogError.keyMissing(path: other.path, seq: 1, keyID: key.id)) { try other.scan(in: 1...5) { _ in } }
    #expect("\(LogError.keyMissing(path: other.path, seq: 2, keyID: key.id))".contains(key.idText))
    try other.close()

    // A damaged key (one bit flipped) is another key: its identifier differs.
    var damagedBytes = key.bytes
    damagedBytes[31] ^= 1
    let damaged = try EncryptionKey(bytes: damagedBytes)
    #expect(damaged.id != key.id)
    let withDamaged = try ActionLog(directory: dir.url, access: .readOnly, options: options(try KeyRing([damaged])))
    expectError(LogError.keyMissing(path: withDamaged.path, seq: 4, keyID: key.id)) { try withDamaged.record(at: 4) }
    try withDamaged.close()

    // Writing needs the ring; a ring on a log in the clear is refused too.
    #expect(throws: LogError.self) { try ActionLog(directory: dir.url, options: options(nil)) }
    do {
      _ = try ActionLog(directory: dir.url, options: options(nil))
    } catch let error as LogError {
      guard case .encryptionMismatch(let errorPath, _) = error else { throw error }
      #expect(errorPath == path)
    }
    // Short keys and bad key files are refused with what is wrong.
    expectError(LogError.invalidKey(reason: "an AES-256 key has 32 bytes, not 16")) {
      try EncryptionKey(bytes: [UInt8](repeating: 1, count: 16))
    }
    let keyFile = dir.url.deletingLastPathComponent().appendingPathComponent("bad-\(UUID().uuidString).keys")
    defer { try? FileManager.default.removeItem(at: keyFile) }
    try "# keys\nzz\n".write(to: keyFile, atomically: true, encoding: .utf8)
    expectError(LogError.invalidKey(reason: "\(keyFile.standardizedFileURL.path) line 2: a key is 64 hex digits")) {
      try KeyRing(contentsOf: keyFile)
    }
    #expect(try fileBytes(dir) == before)

    let plainDir = try TemporaryDirectory()
    defer { plainDir.remove() }
    try ActionLog(directory: plainDir.url, options: options(nil)).close()
    #expect(throws: LogError.self) { try ActionLog(directory: plainDir.url, options: options(try KeyRing([key]))) }
  }

  @Test func tamperedCiphertextAndHeaderFailToDecryptEvenWithARecomputedHash() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    try writeEncryptedLog(at: dir, ring: ring, count: 5)
    let original = try stored(3, in: dir)

    // A byte of the ciphertext, the tag, the nonce, the timestamp, the clear type name: each is
    // caught by the decryption, also when the attacker recomputes the chain hash.
    let typeNameOffset = EntryFormat.sealedHeaderSize
    for offset in [original.count - 40, original.count - 33, 25, 9, typeNameOffset] {
      var changed = original
      changed[offset] ^= 0x01
      try putEntry(3, value: changed, rehash: true, in: dir)
      let log = try ActionLog(directory: dir.url, access: .readOnly, options: options(ring))
      expectError(LogError.decryptionFailed(path: log.path, seq: 3, keyID: ring.current.id), "byte \(offset)") {
        try log.record(at: 3)
      }
      try log.close()
    }
    try putEntry(3, value: original, rehash: false, in: dir)
    let log = try ActionLog(directory: dir.url, access: .readOnly, options: options(ring))
    #expect(try log.record(at: 3)?.seq == 3)
    #expect(try log.verify().isValid)
    try log.close()
  }

  @Test func aCiphertextMovedToAnotherSeqOrLogFailsToDecrypt() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    try writeEncryptedLog(at: dir, ring: ring, count: 5)
    let twin = try TemporaryDirectory()
    defer { twin.remove() }
    try writeEncryptedLog(at: twin, ring: ring, count: 5)

    // Entry 2's bytes under seq 4, with a chain hash that fits there.
    try putEntry(4, value: try stored(2, in: dir), rehash: true, in: dir)
    // The twin log's entry 3 (same key, same seq) in this log: the log id differs.
    try putEntry(3, value: try stored(3, in: twin), rehash: true, in: dir)
    let log = try ActionLog(directory: dir.url, access: .readOnly, options: options(ring))
    defer { try? log.close() }
    expectError(LogError.decryptionFailed(path: log.path, seq: 4, keyID: ring.current.id)) { try log.record(at: 4) }
    expectError(LogError.decryptionFailed(path: log.path, seq: 3, keyID: ring.current.id)) { try log.record(at: 3) }
  }

  @Test func rotationSealsWithTheNewestKeyAndShreddingLeavesAVerifiableChain() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let old = EncryptionKey.random()
    let new = EncryptionKey.random()
    try writeEncryptedLog(at: dir, ring: try KeyRing([old]), count: 3)
    let rotated = try KeyRing([old, new])
    let writer = try ActionLog(directory: dir.url, options: options(rotated))
    try writer.append(contentsOf: (4...6).map { try secretEntry($0) })
    try writer.close()

    let log = try ActionLog(directory: dir.url, access: .readOnly, options: options(rotated))
    #expect(try log.records(in: 1...6).map(\.seq) == [1, 2, 3, 4, 5, 6])
    var keyIDs: [UInt32] = []
    try log.verify().problems.forEach { Issue.record("\($0)") }
    try log.close()
    for seq in UInt64(1)...6 {
      let value = try stored(seq, in: dir)
      keyIDs.append(value[16..<20].reduce(UInt32.zero) { $0 << 8 | UInt32($1) })
    }
    #expect(keyIDs == [old.id, old.id, old.id, new.id, new.id, new.id])

    // Crypto-shredding: without the old key its records are gone for good; the chain still verifies.
    let shredded = try ActionLog(directory: dir.url, access: .readOnly, options: options(try KeyRing([new])))
    defer { try? shredded.close() }
    expectError(LogError.keyMissing(path: shredded.path, seq: 2, keyID: old.id)) { try shredded.record(at: 2) }
    #expect(try shredded.record(at: 5)?.metadata == ["user": "ann-\(secret)"])
    #expect(try shredded.verify().isValid)
    expectError(LogError.snapshotKeyMissing(path: shredded.path, seq: 3, keyID: old.id)) {
      try shredded.snapshot(at: 3)
    }
    // Looking for a snapshot to start from skips it, and says why.
    let latest = try shredded.latestSnapshot()
    #expect(latest.snapshot == nil)
    #expect(latest.skipped.map(\.description) == [LogError.snapshotKeyMissing(path: shredded.path, seq: 3, keyID: old.id).description])
  }

  /// A snapshot whose ciphertext was changed (its checksum recomputed) names its seq and key.
  @Test func aTamperedSnapshotNamesItsSeqAndKey() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    try writeEncryptedLog(at: dir, ring: ring, count: 3)
    let environment = try Environment(path: dir.url.path, configuration: .init(mapSize: 1 << 24, maxDatabases: 8))
    let snapshots = try environment.openDatabase(named: "snapshots")
    try environment.write { txn in
      var value = try #require(try txn.get(forKey: sequenceKey(3), in: snapshots))
      value[80] ^= 0x01  // inside the ciphertext (it starts at 76)
      let body = Array(value.dropLast(32))
      value = body + Array(SHA256.hash(data: body))
      try txn.put(value, forKey: sequenceKey(3), in: snapshots)
    }
    environment.close()
    let log = try ActionLog(directory: dir.url, access: .readOnly, options: options(ring))
    defer { try? log.close() }
    expectError(LogError.snapshotDecryptionFailed(path: log.path, seq: 3, keyID: ring.current.id)) {
      try log.snapshot(at: 3)
    }
    #expect(try log.latestSnapshot().skipped.count == 1)
  }

  /// Large batches, in a log with the tree or without: every
  /// entry gets the chain hash and the leaf it would get alone, the tree's root is the one its
  /// leaves give, and every entry opens to its own content.
  @Test(arguments: [64, 1_000, 1_003], [true, false])
  func largeBatchesAreSealedAndHashedAsEntryByEntry(count: Int, withTree: Bool) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([EncryptionKey.random()])
    let log = try ActionLog.maintainsTree.withValue(withTree) { try ActionLog(directory: dir.url, options: options(ring)) }
    defer { try? log.close() }
    try log.append(try secretEntry(0))
    #expect(try log.append(contentsOf: (1...count).map { try secretEntry($0) }) == 2...UInt64(count + 1))

    var previous = Chain.genesis
    var leaves: [[UInt8]] = []
    for seq in 1...UInt64(count + 1) {
      let value = try #require(try log.storedValue(seq: seq))
      let body = Array(value.dropLast(32))
      #expect(Array(value.suffix(32)) == body.withUnsafeBytes { Chain.hash(previous: previous, seq: seq, body: $0) })
      leaves.append(MerkleHash.leaf(seq: seq, value: value))
      previous = Array(value.suffix(32))
    }
    func subtree(_ level: Int, _ index: UInt64) -> [UInt8] {
      level == 0 ? leaves[Int(index)] : MerkleHash.node(subtree(level - 1, 2 * index), subtree(level - 1, 2 * index + 1))
    }
    if withTree {
      #expect(try log.treeRoot(size: UInt64(count + 1)) == MerkleTree.root(size: UInt64(count + 1), subtree: subtree))
    } else {
      #expect(throws: TreeError.self) { try log.treeRoot(size: UInt64(count + 1)) }
    }
    #expect(try log.verify().isValid)
    var seq: UInt64 = 0
    try log.scan(in: 1...UInt64(count + 1)) { view in
      let payload = try view.codec.decode([String: String].self, from: Array(view.payload))
      #expect(payload["iban"] == "\(secret)-\(seq)")
      seq += 1
    }
    #expect(seq == UInt64(count + 1))
  }

  /// A large batch that fails while its entries are encoded (the sealing thread was started and
  /// waits for them) writes nothing, lets that thread go, and the next batch is written whole.
  @Test func aLargeBatchThatFailsBeforeSealingWritesNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: options(try KeyRing([EncryptionKey.random()])))
    defer { try? log.close() }
    var batch = try (1...200).map { try secretEntry($0) }
    batch[149] = try NewEntry(kind: .undo, encoding: ["target": 500], typeName: "undo", codec: .cbor)
    expectError(.invalidEntry(reason: "the undo entry at 150 names target 500, which is not before it")) {
      try log.append(contentsOf: batch)
    }
    #expect(try log.bounds() == nil)
    #expect(try log.append(contentsOf: (1...200).map { try secretEntry($0) }) == 1...200)
    #expect(try log.verify().isValid)
  }
}
