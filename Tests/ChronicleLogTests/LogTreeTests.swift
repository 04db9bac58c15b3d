import Foundation
import LMDB
import TestSupport
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
    for batch in [1, 5, 64, 3, 130] {
      try log.append(contentsOf: try (1...batch).map { _ in n += 1; return try entry(n) })
      if batch == 64 {
        try log.close()
        log = try ActionLog(directory: dir.url)
      }
    }
    #expect(try log.treeSize == UInt64(n))
    try log.close()
    #expect(try checkStoredTree(dir.url) == UInt64(n))

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
    #expect(try reader.treeSize == 100)
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
    #expect(try log.verify().problems.contains { $0.message.contains("entries 31…40 were removed") })
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
    #expect(try problems(dir, note) == [.chainRewritten(firstChanged: 25)])
  }

  @Test func oldestEntriesRemovedWithAForgedAnchorAreNamed() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let note = try signedLog(dir)
    // Entries 1…10 removed; the anchor set to a made-up hash; 11…40 rewritten to follow it.
    try rewrite(dir, from: 11, anchor: ChainAnchor(seq: 10, hash: Array(repeating: 0xAB, count: 32)), change: nil)
    #expect(try problems(dir, note) == [.anchorForged(anchor: 10)])

    // The same removal with the tree hashes of the removed entries deleted too.
    let other = try TemporaryDirectory()
    defer { other.remove() }
    let otherNote = try signedLog(other)
    try rewrite(other, from: 11, anchor: ChainAnchor(seq: 10, hash: Array(repeating: 0xAB, count: 32)), change: nil)
    try edit(other) { txn, tree, _ in try txn.empty(tree) }
    #expect(try problems(other, otherNote) == [.oldestRemovedWithoutTree(anchor: 10)])
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
      try txn.put(Array(repeating: 1, count: 32), forKey: [2] + key(3), in: tree)
    }
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    let messages = try log.verify().problems.map(\.description)
    #expect(messages == ["entry 13: the stored Merkle tree hash at level 2, index 3 (entries 13…16) differs from the one recomputed from the entries"])
  }
}
