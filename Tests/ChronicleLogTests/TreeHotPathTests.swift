import Crypto
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@_spi(Benchmarks) @testable import ChronicleLog

/// The tree's append and verification paths: the inline hashes they use, the streaming check of
/// `verify()`, and logs written without the tree (the benchmark's comparison).
@Suite struct TreeHotPathTests {
  private func entry(_ n: Int) throws -> NewEntry {
    try NewEntry(encoding: "payload-\(n)", typeName: "text", metadata: ["n": "\(n)"], codec: .cbor)
  }

  private func key(level: UInt8, index: UInt64) -> [UInt8] { [level] + withUnsafeBytes(of: index.bigEndian) { Array($0) } }

  private func edit(_ dir: TemporaryDirectory, _ body: (Transaction, _ tree: Database) throws -> Void) throws {
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    defer { env.close() }
    let tree = try env.openDatabase(named: "tree")
    try env.write { try body($0, tree) }
  }

  @Test func inlineHashesAreTheSpecifiedOnes() throws {
    for length in [0, 1, 23, 55, 56, 63, 64, 65, 200] {
      let value = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
      let seq = UInt64(length) << 40 | 0x0102
      let leaf = value.withUnsafeBytes { MerkleHash.leafDigest(seq: seq, value: $0) }
      #expect(leaf.bytes == MerkleHash.leaf(seq: seq, value: value), "leaf of \(length) bytes")
      #expect(leaf.bytes == Array(SHA256.hash(data: [0] + withUnsafeBytes(of: seq.bigEndian) { Array($0) } + value)))
      let other = MerkleHash.leafDigest(seq: seq + 1, value: UnsafeRawBufferPointer(start: nil, count: 0))
      #expect(MerkleHash.nodeDigest(leaf, other).bytes == Array(SHA256.hash(data: [0x01] + leaf.bytes + other.bytes)))
      #expect(MerkleHash.nodeDigest(leaf, other) != MerkleHash.nodeDigest(other, leaf))
    }
  }

  /// A level's parents, hashed two at a time in `CChronicleSHA256`, are each pair's node hash, with and
  /// without a waiting left sibling, for even and odd numbers of children.
  @Test func aLevelsParentsAreItsPairsNodes() {
    let hashes = (0..<12).map { MerkleDigest(MerkleHash.leaf([UInt8($0)])) }
    let waiting = MerkleDigest(MerkleHash.leaf(Array("waiting".utf8)))
    var parents: [MerkleDigest] = [waiting]
    for count in 0...hashes.count {
      let children = Array(hashes.prefix(count))
      MerkleHash.parents(of: children, after: nil, into: &parents)
      let pairs = stride(from: 0, to: count - 1, by: 2).map { MerkleHash.nodeDigest(children[$0], children[$0 + 1]) }
      #expect(parents == pairs, "\(count) children")
      MerkleHash.parents(of: children, after: waiting, into: &parents)
      let withWaiting = count == 0 ? [] : [MerkleHash.nodeDigest(waiting, children[0])]
        + stride(from: 1, to: count - 1, by: 2).map { MerkleHash.nodeDigest(children[$0], children[$0 + 1]) }
      #expect(parents == withWaiting, "\(count) children after a waiting sibling")
    }
  }

  /// Node hashes built straight from the two child hashes (each 16-byte half shifted by one byte
  /// into the message, with no copy through memory) are SHA-256(0x01 ‖ left ‖ right), one at a time
  /// and two at a time, for every value of the bytes the shift carries from one half to the next
  /// (15 and 31 of each child) and for random hashes.
  @Test func nodeHashesMatchSwiftCryptoForEveryCarriedByte() {
    var random = SplitMix64(seed: 0x0DE5)
    var children: [MerkleDigest] = []
    for value in 0...255 {
      var bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
      bytes[15] = UInt8(value)
      bytes[31] = UInt8(255 - value)
      if value % 3 == 0 { bytes[0] = UInt8(value) }
      children.append(MerkleDigest(bytes))
    }
    func expected(_ left: MerkleDigest, _ right: MerkleDigest) -> [UInt8] {
      Array(SHA256.hash(data: [0x01] + left.bytes + right.bytes))
    }
    var parents: [MerkleDigest] = []
    MerkleHash.parents(of: children, after: nil, into: &parents)
    #expect(parents.count == 128)
    for (n, parent) in parents.enumerated() {
      #expect(parent.bytes == expected(children[2 * n], children[2 * n + 1]), "pair \(n)")
    }
    // The same children paired the other way: each child's last byte also goes to the left side.
    MerkleHash.parents(of: children, after: children[255], into: &parents)
    #expect(parents.first?.bytes == expected(children[255], children[0]))
    for n in 1..<parents.count {
      #expect(parents[n].bytes == expected(children[2 * n - 1], children[2 * n]), "pair \(n) after a waiting sibling")
    }
    for (left, right) in zip(children, children.reversed()) {
      #expect(MerkleHash.nodeDigest(left, right).bytes == expected(left, right))
    }
  }

  @Test func theFrontierReportsEverySubtreeItCompletes() {
    var frontier = MerkleFrontier()
    var reported: [String] = []
    for n in 0..<40 {
      let leaf = MerkleHash.leaf([UInt8(n)])
      frontier.append(leaf: MerkleDigest(leaf), reportingFrom: 2) { level, index, _ in reported.append("\(level)/\(index)") }
    }
    // Every complete subtree of level 2 and above among 40 leaves, each when its last leaf arrives.
    #expect(reported == ["2/0", "2/1", "3/0", "2/2", "2/3", "3/1", "4/0", "2/4", "2/5", "3/2", "2/6", "2/7", "3/3", "4/1", "5/0", "2/8", "2/9", "3/4"])
    #expect(frontier.size == 40)
    #expect(frontier.hashes.count == 2)
  }

  /// A batch of leaves added at once (level by level, nodes hashed two at a time) gives the same
  /// frontier, root and completed subtrees as the same leaves added one by one, from any size.
  @Test func batchedLeavesMatchLeavesOneByOne() {
    var random = SplitMix64(seed: 0x7EE)
    var sizes: [(old: Int, added: Int)] = []
    for old in 0...33 { for added in [2, 3, 4, 5, 7, 8, 16, 17, 31, 64] { sizes.append((old, added)) } }
    sizes += [(1_023, 1_000), (1_024, 1_000), (4_095, 2), (65_535, 1), (12_345, 1_000)]
    for _ in 0..<40 { sizes.append((Int.random(in: 0...3_000, using: &random), Int.random(in: 0...300, using: &random))) }
    for (old, added) in sizes {
      let leaves = (0..<(old + added)).map { n in withUnsafeBytes(of: UInt64(n)) { MerkleHash.leafDigest(seq: UInt64(n) + 1, value: $0) } }
      var base = MerkleFrontier()
      for leaf in leaves.prefix(old) { base.append(leaf: leaf) { _, _, _ in } }
      for lowest in [0, 4] {
        var oneByOne = base
        var expected: Set<MerkleFrontier.Completed> = []
        for leaf in leaves.dropFirst(old) {
          oneByOne.append(leaf: leaf, reportingFrom: lowest) { expected.insert(.init(level: $0, index: $1, hash: $2.bytes)) }
        }
        var batched = base
        var reported: [MerkleFrontier.Completed] = []
        batched.append(leaves: Array(leaves.dropFirst(old)), reportingFrom: lowest) {
          reported.append(.init(level: $0, index: $1, hash: $2.bytes))
        }
        #expect(batched == oneByOne, "\(added) leaves after \(old)")
        #expect(batched.root == oneByOne.root, "\(added) leaves after \(old)")
        #expect(Set(reported) == expected && reported.count == expected.count, "\(added) leaves after \(old), from level \(lowest)")
      }
    }
  }

  /// The append path's hashes of a batch (each leaf hashed together with the next entry's chain
  /// hash) are the chain hash and leaf hash of each entry computed alone. Bodies of up to 700
  /// bytes take both of its forms: messages built whole on the stack (values up to about 500
  /// bytes) and streamed ones, and pairs of one of each.
  @Test func batchHashesAreEachEntrysChainAndLeaf() {
    var random = SplitMix64(seed: 0xC4A1)
    for count in [1, 2, 3, 9, 40, 200] {
      let bodies = (0..<count).map { _ in
        (0..<Int.random(in: 0...700, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
      }
      var values: [UInt8] = []
      var ends: [Int] = []
      for body in bodies {
        values += body + [UInt8](repeating: 0, count: EntryFormat.hashSize)
        ends.append(values.count)
      }
      let previous = (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) }
      let first = UInt64.random(in: 1...1 << 40, using: &random)
      for withLeaves in [false, true] {
        var hashed = values
        let leaves = hashed.withUnsafeMutableBytes { all in
          previous.withUnsafeBytes { EntryHashes.compute(all, ends: ends, first: first, previous: $0, leaves: withLeaves) }
        }
        var link = previous
        var start = 0
        for (index, body) in bodies.enumerated() {
          let seq = first + UInt64(index)
          let chain = body.withUnsafeBytes { Chain.hash(previous: link, seq: seq, body: $0) }
          #expect(Array(hashed[(ends[index] - 32)..<ends[index]]) == chain, "chain hash of entry \(index + 1) of \(count)")
          if withLeaves {
            #expect(leaves[index].bytes == MerkleHash.leaf(seq: seq, value: body + chain), "leaf of entry \(index + 1) of \(count)")
          }
          link = chain
          start = ends[index]
        }
        #expect(start == hashed.count)
        #expect(leaves.count == (withLeaves ? count : 0))

        // Both hashing paths (the CPU's SHA extensions where it has them, swift-crypto) write the
        // same chain hashes and return the same leaves.
        for path in SHA256Path.onThisCPU {
          var other = values
          let otherLeaves = other.withUnsafeMutableBytes { all in
            previous.withUnsafeBytes {
              EntryHashes.compute(all, ends: ends, first: first, previous: $0, leaves: withLeaves, path: path)
            }
          }
          #expect(other == hashed, "\(count) entries hashed on \(path)")
          #expect(otherLeaves == leaves, "\(count) entries' leaves hashed on \(path)")
        }
      }
    }
  }

  /// `verify()` reports damaged stored hashes level by level, each level in order, below the
  /// stored level only the hashes that are stored, over entries after a compaction's anchor.
  @Test func verifyNamesEveryDamagedStoredHashLevelByLevel() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    try log.append(contentsOf: try (1...100).map(entry))
    try log.writeSnapshot(at: 37, state: Array("state".utf8), codec: .json, schemaVersion: 1)
    try log.close()
    try ActionLog.compact(directory: dir.url, before: 38, disposal: .discard)
    let compacted = try ActionLog(directory: dir.url, access: .readOnly)
    #expect(try compacted.meta().anchor.seq == 37)
    #expect(try compacted.verify().isValid)
    let leaf60 = MerkleHash.leaf(seq: 60, value: try #require(try compacted.storedValue(seq: 60)))
    try compacted.close()

    let wrong = [UInt8](repeating: 7, count: 32)
    try edit(dir) { txn, tree in
      try txn.put(wrong, forKey: key(level: 5, index: 1), in: tree)  // entries 33…64: reaches left of the anchor, not recomputable
      try txn.put(wrong, forKey: key(level: 4, index: 4), in: tree)  // entries 65…80
      _ = try txn.delete(forKey: key(level: 4, index: 3), in: tree)  // entries 49…64
      try txn.put(wrong, forKey: key(level: 2, index: 10), in: tree)  // entries 41…44, stored by no one
      try txn.put(leaf60, forKey: key(level: 0, index: 59), in: tree)  // entry 60, stored and right
      try txn.put(wrong, forKey: key(level: 1, index: 49), in: tree)  // entries 99…100, the last two
      try txn.put(wrong, forKey: key(level: 3, index: 2), in: tree)  // entries 17…24: left of the anchor
    }
    let damaged = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? damaged.close() }
    let messages = try damaged.verify().problems.map(\.description)
    let differs = "differs from the one recomputed from the entries"
    #expect(
      messages == [
        "entry 99: the stored Merkle tree hash at level 1, index 49 (entries 99…100) \(differs)",
        "entry 41: the stored Merkle tree hash at level 2, index 10 (entries 41…44) \(differs)",
        "entry 49: the stored Merkle tree hash at level 4, index 3 (entries 49…64) is missing",
        "entry 65: the stored Merkle tree hash at level 4, index 4 (entries 65…80) \(differs)",
      ])
  }

  /// A compacted log whose entries are intact but whose anchor's hash was changed: the entries
  /// still reproduce the checkpoint's root, and only the first entry's link to the anchor tells.
  @Test func aForgedAnchorHashAloneIsNamed() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let signer = try NoteSigner(name: "chronicle.test/log", seed: Array(repeating: 5, count: 32))
    let log = try ActionLog(directory: dir.url)
    try log.append(contentsOf: try (1...60).map(entry))
    try log.writeSnapshot(at: 21, state: Array("state".utf8), codec: .json, schemaVersion: 1)
    let note = try log.signCheckpoint(with: signer)
    try log.close()
    try ActionLog.compact(directory: dir.url, before: 22, disposal: .discard)
    let compacted = try ActionLog(directory: dir.url, access: .readOnly)
    #expect(try compacted.verify(checkpoint: note, verifier: signer.verifier).isValid)
    let anchor = try compacted.meta().anchor
    try compacted.close()
    #expect(anchor.seq == 21)
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    let meta = try env.openDatabase(named: "meta")
    var forged = anchor.hash
    forged[0] ^= 1
    try env.write { try $0.put(MetaRecord.anchorValue(ChainAnchor(seq: 21, hash: forged)), forKey: Array("anchor".utf8), in: meta) }
    env.close()
    let reopened = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? reopened.close() }
    #expect(try reopened.verify(checkpoint: note, verifier: signer.verifier).problems == [.anchorForged(anchor: 21)])
  }

  /// An append whose transaction runs again after the map grew keeps the tree: the retry starts
  /// from the writer's tree, not from the one the failed attempt had already extended, for batches
  /// of 50 and of 100 entries.
  @Test func theTreeFollowsAppendsAcrossMapGrowth() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(initialMapSize: 256 << 10))
    defer { try? log.close() }
    let payload = String(repeating: "x", count: 600)
    var count: UInt64 = 0
    for batch in 0..<40 {
      let entries = try (0..<(batch % 2 == 0 ? 50 : 100)).map { try NewEntry(encoding: "\(payload)-\(batch)-\($0)", typeName: "text", codec: .cbor) }
      count = try log.append(contentsOf: entries).upperBound
    }
    #expect(try log.fileSize() > 256 << 10, "the map grew")
    #expect(try log.treeSize == count)
    #expect(try log.verify().isValid)
    let note = try log.signCheckpoint(with: NoteSigner(name: "chronicle.test/log", seed: Array(repeating: 3, count: 32)))
    #expect(try Checkpoint(parsing: note.text).size == count)
  }

  @Test func aLogWrittenWithoutTheTreeGetsItFromTheNextWriter() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try ActionLog.maintainsTree.withValue(false) {
      let log = try ActionLog(directory: dir.url)
      try log.append(contentsOf: try (1...50).map(entry))
      try log.append(try entry(51))
      #expect(throws: TreeError.self) { try log.signCheckpoint(with: NoteSigner(name: "t", seed: Array(repeating: 1, count: 32))) }
      try log.close()
    }
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    #expect((try? env.openDatabase(named: "tree")) == nil, "no tree database without the tree")
    env.close()
    let log = try ActionLog(directory: dir.url)
    defer { try? log.close() }
    #expect(try log.treeSize == 51)
    try log.append(contentsOf: try (52...64).map(entry))
    var frontier = MerkleFrontier()
    for seq in UInt64(1)...64 { frontier.append(leaf: MerkleHash.leaf(seq: seq, value: try #require(try log.storedValue(seq: seq)))) }
    #expect(try log.treeRoot(size: 64) == frontier.root)
    #expect(try log.verify().isValid)
  }
}
