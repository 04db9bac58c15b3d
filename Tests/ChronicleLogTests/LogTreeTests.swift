import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// The stored Merkle tree of real logs in temporary directories, and checkpoints against tampering.
@Suite struct LogTreeTests {
  private let signer = try! NoteSigner(name: "chronicle.test/log", seed: Array(repeating: 9, count: 32))

  private func entry(_ n: Int) throws -> NewEntry {
    try NewEntry(encoding: "payload-\(n)", typeName: "text", metadata: ["n": "\(n)"], codec: n % 2 == 0 ? .json : .cbor)
  }

  /// Every stored subtree recomputed from the entries' stored values.
  private func checkStoredTree(_ url: URL) throws -> UInt64 {
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    let report = try log.verify()
    #expect(report.isValid, "\(report.problems)")
    let size = try log.treeSize
    var leaves: [[UInt8]] = []
    for seq in 1...max(size, 1) where size > 0 {
      let raw = try #require(try log.storedValue(seq: seq))
      leaves.append(MerkleHash.leaf(seq: seq, value: raw))
    }
    var frontier = MerkleFrontier()
    for leaf in leaves { frontier.append(leaf: leaf) }
    #expect(try log.treeRoot(size: size) == frontier.root)
    return size
  }

  @Test func storedSubtreesEqualRecomputedAfterAppendsBatchesAndReopening() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var log = try ActionLog(directory: dir.url)
    var n = 0
    for _ in 0..<37 {
      n += 1
      try log.append(try entry(n))
    }
    for batch in [1, 5, 64, 3, 130, 1_003] {
      try log.append(contentsOf: try (1...batch).map { _ in n += 1; return try entry(n) })
      if batch == 64 {
        try log.close()
        log = try ActionLog(directory: dir.url)
      }
    }
    #expect(try log.treeSize == UInt64(n))
    try log.close()
    #expect(try checkStoredTree(dir.url) == UInt64(n))
    // Stored: exactly the complete subtrees of 16 leaves and more (docs/log-format.md §9).
    var expected: Set<[UInt8]> = []
    for level in TreeStorage.storedLevel..<64 where UInt64(n) >> UInt64(level) > 0 {
      for index in 0..<(UInt64(n) >> UInt64(level)) { expected.insert([UInt8(level)] + key(index)) }
    }
    #expect(try storedKeys(dir) == expected)

    // Proofs from the log verify against its roots.
    log = try ActionLog(directory: dir.url)
    defer { try? log.close() }
    let size = try log.treeSize
    let root = try log.treeRoot(size: size)
    for seq in [UInt64(1), 37, 100, size] {
      let raw = try #require(try log.storedValue(seq: seq))
      try MerkleTree.verifyInclusion(
        leafHash: MerkleHash.leaf(seq: seq, value: raw), index: seq - 1, size: size,
        proof: try log.inclusionProof(seq: seq, treeSize: size), root: root)
    }
    for old in [UInt64(1), 37, 64, size - 1] {
      try MerkleTree.verifyConsistency(
        oldSize: old, newSize: size, oldRoot: try log.treeRoot(size: old), newRoot: root,
        proof: try log.consistencyProof(from: old, to: size))
    }
    #expect(throws: TreeError.self) { try log.inclusionProof(seq: size + 1, treeSize: size + 1) }
  }

  @Test func aLogWithoutATreeGetsItBuiltByTheWriterAndAPartialBuildContinues() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    try log.append(contentsOf: try (1...300).map(entry))
    try log.close()
    // Remove the tree above leaf 100 and the log id, as an interrupted build (or an older writer) leaves it.
    try edit(dir) { txn, tree, meta in
      try txn.deleteSubtrees(beyond: 100, in: tree)
      _ = try txn.delete(forKey: Array("log-id".utf8), in: meta)
    }
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    // Stored subtrees reach entry 96; the tree follows the entries up to the next unstored 16-entry subtree.
    #expect(try reader.treeSize == 111)
    #expect(try reader.logID() == nil)
    try reader.close()
    let writer = try ActionLog(directory: dir.url)
    #expect(try writer.treeSize == 300)
    #expect(try writer.logID()?.count == 16)
    try writer.close()
    #expect(try checkStoredTree(dir.url) == 300)
  }

  /// A log of 40 entries with a snapshot at 10, a signed checkpoint of all 40, and raw LMDB access.
  private func signedLog(_ dir: TemporaryDirectory) throws -> SignedNote {
    let log = try ActionLog(directory: dir.url, options: .init(appID: "ledger"))
    try log.append(contentsOf: try (1...40).map(entry))
    try log.writeSnapshot(at: 10, state: Array("state".utf8), codec: .json, schemaVersion: 1)
    let note = try log.signCheckpoint(with: signer)
    #expect(try log.checkpoints() == [note])
    #expect(try log.verify(checkpoint: note, verifier: signer.verifier).isValid)
    try log.close()
    return note
  }

  private func edit(
    _ dir: TemporaryDirectory, _ body: (Transaction, _ tree: Database, _ meta: Database) throws -> Void
  ) throws {
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    defer { env.close() }
    let tree = try env.openDatabase(named: "tree")
    let meta = try env.openDatabase(named: "meta")
    try env.write { try body($0, tree, meta) }
  }

  private func rewrite(_ dir: TemporaryDirectory, from first: UInt64, anchor: ChainAnchor?, change: UInt64?) throws {
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    defer { env.close() }
    let entries = try env.openDatabase(named: "entries")
    let meta = try env.openDatabase(named: "meta")
    try env.write { txn in
      var previous: [UInt8]
      if let anchor { previous = anchor.hash } else { previous = Array(try txn.get(forKey: key(first - 1), in: entries)!.suffix(32)) }
      if let anchor {
        for seq in 1...anchor.seq { _ = try txn.delete(forKey: key(seq), in: entries) }
        try txn.put(key(anchor.seq) + anchor.hash, forKey: Array("anchor".utf8), in: meta)
      }
      for seq in first...40 {
        var value = try txn.get(forKey: key(seq), in: entries)!
        if seq == change { value[value.count - 33] ^= 0x01 }
        let body = Array(value.dropLast(32))
        let hash = body.withUnsafeBytes { Chain.hash(previous: previous, seq: seq, body: $0) }
        try txn.put(body + hash, forKey: key(seq), in: entries)
        previous = hash
      }
    }
  }

  private func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

  private func problems(_ dir: TemporaryDirectory, _ note: SignedNote) throws -> [CheckpointVerification.Problem] {
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    return try log.verify(checkpoint: note, verifier: signer.verifier).problems
  }

  @Test func newestEntriesRemovedAreNamed() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let note = try signedLog(dir)
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    let entries = try env.openDatabase(named: "entries")
    try env.write { txn in for seq in UInt64(31)...40 { _ = try txn.delete(forKey: key(seq), in: entries) } }
    env.close()
    #expect(try problems(dir, note) == [.entriesRemovedFromEnd(logEnd: 30, checkpointSize: 40)])
    // Without a checkpoint, verify() sees it too: the tree covers more than the entries.
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    #expect(try log.verify().problems.contains { $0.message.contains("entries 31…32 at least were removed") })
  }

  @Test func aRewrittenChainIsNamedWithItsFirstChangedEntry() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let note = try signedLog(dir)
    try rewrite(dir, from: 25, anchor: nil, change: 25)
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    let plain = try log.verify().problems.filter { !$0.message.contains("Merkle") }
    try log.close()
    #expect(plain.isEmpty, "the rewritten chain verifies on its own: \(plain)")
    // Entry 25 changed: the stored 16-entry subtree of entries 17…32 is the first that differs.
    let found = try problems(dir, note)
    #expect(found == [.chainRewritten(firstChanged: 17)])
    #expect(found.first?.description.hasSuffix("first among entries 17…32") == true, "\(found)")
  }

  @Test func oldestEntriesRemovedWithAForgedAnchorAreNamed() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let note = try signedLog(dir)
    // Entries 1…16 removed; the anchor set to a made-up hash; 17…40 rewritten to follow it. The
    // stored subtree of entries 1…16 is what a compaction there would keep: the anchor does not fit it.
    try rewrite(dir, from: 17, anchor: ChainAnchor(seq: 16, hash: Array(repeating: 0xAB, count: 32)), change: nil)
    #expect(try problems(dir, note) == [.anchorForged(anchor: 16)])

    // The same removal with the tree hashes of the removed entries deleted too.
    let other = try TemporaryDirectory()
    defer { other.remove() }
    let otherNote = try signedLog(other)
    try rewrite(other, from: 17, anchor: ChainAnchor(seq: 16, hash: Array(repeating: 0xAB, count: 32)), change: nil)
    try edit(other) { txn, tree, _ in try txn.empty(tree) }
    #expect(try problems(other, otherNote) == [
        .oldestRemovedWithoutTree(anchor: 16, missing: "the hash of entries 1…16 (level 4, index 0) is missing")
      ])

    // Entries 1…10 removed: no compaction stored the hashes below 16 entries that commit to them.
    let third = try TemporaryDirectory()
    defer { third.remove() }
    let thirdNote = try signedLog(third)
    try rewrite(third, from: 11, anchor: ChainAnchor(seq: 10, hash: Array(repeating: 0xAB, count: 32)), change: nil)
    #expect(try problems(third, thirdNote) == [
        .oldestRemovedWithoutTree(anchor: 10, missing: "the hash of entry 1 (level 0, index 0) is missing")
      ])
  }

  @Test func rootsProofsAndCheckpointsOfTheRemainingEntriesHoldAfterACompactionAtAnUnalignedAnchor() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var log = try ActionLog(directory: dir.url, options: .init(appID: "ledger"))
    try log.append(contentsOf: try (1...45).map(entry))
    try log.writeSnapshot(at: 21, state: Array("state".utf8), codec: .json, schemaVersion: 1)
    let note = try log.signCheckpoint(with: signer)
    var roots: [UInt64: [UInt8]] = [:]
    for size in UInt64(21)...45 { roots[size] = try log.treeRoot(size: size) }
    try log.close()
    try ActionLog.compact(directory: dir.url, before: 21, disposal: .discard)

    // Anchor 21 = 16 + 4 + 1: entries 1…16 stay stored at level 4; compaction stored 17…20 (level 2)
    // and 21 (level 0), whose entries are gone; nothing else left of the anchor remains.
    let lowKeys = try storedKeys(dir).filter { $0[0] < 4 }
    #expect(lowKeys == [[2] + key(4), [0] + key(20)], "\(lowKeys.map(\.hex).sorted())")
    log = try ActionLog(directory: dir.url)
    defer { try? log.close() }
    #expect(try log.treeSize == 45)
    for size in UInt64(21)...45 { #expect(try log.treeRoot(size: size) == roots[size], "size \(size)") }
    for seq in [UInt64(22), 30, 33, 45] {
      let raw = try #require(try log.storedValue(seq: seq))
      try MerkleTree.verifyInclusion(
        leafHash: MerkleHash.leaf(seq: seq, value: raw), index: seq - 1, size: 45,
        proof: try log.inclusionProof(seq: seq, treeSize: 45), root: try #require(roots[45]))
    }
    for old in [UInt64(21), 22, 32, 44] {
      try MerkleTree.verifyConsistency(
        oldSize: old, newSize: 45, oldRoot: try #require(roots[old]), newRoot: try #require(roots[45]),
        proof: try log.consistencyProof(from: old, to: 45))
    }
    let result = try log.verify(checkpoint: note, verifier: signer.verifier)
    #expect(result.isValid, "\(result)")
    #expect(result.compactedThrough == 21)
    // The writer's frontier, rebuilt on open, keeps extending the same tree.
    try log.append(contentsOf: try (46...50).map(entry))
    #expect(try log.treeSize == 50)
    #expect(try log.consistencyProof(from: 45, to: 50).count > 0)
    try MerkleTree.verifyConsistency(
      oldSize: 45, newSize: 50, oldRoot: try #require(roots[45]), newRoot: try log.treeRoot(size: 50),
      proof: try log.consistencyProof(from: 45, to: 50))
    #expect(try log.verify().isValid)
  }

  /// The keys of the stored subtrees.
  private func storedKeys(_ dir: TemporaryDirectory) throws -> Set<[UInt8]> {
    var keys: Set<[UInt8]> = []
    try edit(dir) { txn, tree, _ in
      try txn.withCursor(on: tree) { cursor in
        var item = try cursor.first()
        while let (key, _) = item {
          keys.insert(Array(key))
          item = try cursor.next()
        }
      }
    }
    return keys
  }

  @Test func relabelledMetaIsNamed() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let note = try signedLog(dir)
    try edit(dir) { txn, _, meta in try txn.put(Array("other-app".utf8), forKey: Array("app".utf8), in: meta) }
    let found = try problems(dir, note)
    #expect(found.count == 1)
    guard case .originMismatch(let checkpointOrigin, let logOrigin)? = found.first else {
      Issue.record("\(found)")
      return
    }
    #expect(checkpointOrigin.hasPrefix("chronicle/ledger/"))
    #expect(logOrigin.hasPrefix("chronicle/other-app/"))
  }

  @Test func aChangedStoredTreeHashIsReportedByVerify() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    _ = try signedLog(dir)
    try edit(dir) { txn, tree, _ in
      try txn.put(Array(repeating: 1, count: 32), forKey: [4] + key(1), in: tree)
    }
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    let messages = try log.verify().problems.map(\.description)
    #expect(messages == ["entry 17: the stored Merkle tree hash at level 4, index 1 (entries 17…32) differs from the one recomputed from the entries"])
  }
}
