import ChronicleLog
import FixtureApp
import Foundation
import ChronicleTestTools
import Testing

/// fixtures/v1-features: every entry kind, undo stacks in snapshots, a compaction, the Merkle tree
/// and signed checkpoints, written once and read back byte for byte by every later version. Its
/// compaction was the first one, which kept only the anchor's tree hashes: its checkpoint older
/// than the anchor can no longer be proven, and the check says which hash is missing.
/// fixtures/v1-compacted-checkpoints is the same plan compacted by a compaction that keeps what
/// every stored checkpoint needs: it proves all of them.
///
/// The tree is compared by what it proves (the roots of the checkpoints and of the whole tree, the
/// recorded proofs), not by the keys the `tree` database holds: which hashes left of the anchor a
/// compaction keeps may grow, and any set that reproduces those roots is right.
@Suite struct FeaturesFixtureTests {
  static let name = "v1-features"
  /// The same plan, compacted keeping what each stored checkpoint needs.
  static let keptCheckpoints = "v1-compacted-checkpoints"

  @Test(arguments: [name, keptCheckpoints]) func readsBackByteForByte(_ name: String) throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory(name))
    let tree = try #require(expected.tree, "expected.jsonl has no tree line")
    let log = try ActionLog(directory: try Fixtures.copy(name, into: temporary), access: .readOnly)
    defer { try? log.close() }

    let report = try log.verify()
    #expect(report.isValid, "verify() found: \(report.problems)")
    #expect(report.entriesChecked == expected.entries.count)
    #expect(report.snapshotsChecked == expected.snapshots.count)
    #expect(report.range == (FeaturesFixture.cut + 1)...FeaturesFixture.secondPart.upperBound)
    #expect(fixtureHex(report.head) == expected.head.head)
    #expect(try log.count() == expected.head.count)

    let meta = try log.meta()
    #expect(meta.formatVersion == 1)
    #expect(meta.appID == FeaturesFixture.appID && meta.appID == expected.head.appID)
    #expect(meta.created == expected.head.created)
    #expect(meta.anchor.seq == FeaturesFixture.cut && meta.anchor.seq == tree.anchorSeq)
    #expect(fixtureHex(meta.anchor.hash) == tree.anchorHashHex)

    for line in expected.entries {
      let seq = line.seq
      let record = try #require(try log.record(at: seq), "entry \(seq) is missing")
      expectEntry(record, matches: line)
    }
    #expect(try log.record(at: FeaturesFixture.cut) == nil, "the entries up to the anchor were compacted away")
    #expect(try log.snapshots().map(\.seq) == expected.snapshots.map(\.snapshot))
    for line in expected.snapshots {
      let snapshot = try #require(try log.snapshot(at: line.snapshot), "snapshot \(line.snapshot) is missing")
      #expect(snapshot.timestamp == line.timestamp, "snapshot \(line.snapshot): timestamp")
      #expect(snapshot.codec.description == line.codec, "snapshot \(line.snapshot): codec")
      #expect(snapshot.schemaVersion == line.schemaVersion, "snapshot \(line.snapshot): schema version")
      #expect(fixtureHex(snapshot.state) == line.stateHex, "snapshot \(line.snapshot): state bytes")
      #expect(fixtureHex(snapshot.chainHash) == line.chainHashHex, "snapshot \(line.snapshot): chain hash")
      #expect(fixtureHex(snapshot.auxiliary) == line.auxiliaryHex, "snapshot \(line.snapshot): auxiliary bytes")
    }

    // The tree and its identity.
    #expect(try log.treeSize == tree.tree)
    #expect(fixtureHex(try log.treeRoot(size: tree.tree)) == tree.rootHex)
    #expect(try log.logID() == FeaturesFixture.logID)
    #expect(fixtureHex(try log.logID() ?? []) == tree.logIDHex)
    #expect(try log.origin() == tree.origin)

    // The checkpoints, byte for byte, and what they prove.
    let verifiers = try tree.verifierKeys.map { try NoteVerifier(parsing: $0) }
    #expect(verifiers.map(\.text) == [try FeaturesFixture.signer().verifier.text, try FeaturesFixture.secondSigner().verifier.text])
    let notes = try log.checkpoints()
    #expect(notes.map { String(decoding: $0.formatted, as: UTF8.self) } == expected.checkpoints.map(\.note))
    #expect(expected.checkpoints.map(\.checkpoint) == FeaturesFixture.checkpointSizes)
    for (note, line) in zip(notes, expected.checkpoints) {
      let checkpoint = try Checkpoint(parsing: note.text)
      #expect(checkpoint.origin == tree.origin && checkpoint.size == line.checkpoint)
      #expect(fixtureHex(checkpoint.rootHash) == line.rootHex)
      #expect(note.verifiedSigners(among: verifiers).count == note.signatures.count, "checkpoint \(line.checkpoint)")
      #expect(note.signatures.count == (FeaturesFixture.cosignedSizes.contains(line.checkpoint) ? 2 : 1))
      let check = try log.verify(checkpoint: note, verifier: verifiers[0])
      if name == Self.name, line.checkpoint < FeaturesFixture.cut {
        #expect(
          check.problems == [
            .oldestRemovedWithoutTree(
              anchor: FeaturesFixture.cut, missing: "the hash of entries 1…16 (level 4, index 0) is missing")
          ], "checkpoint \(line.checkpoint): \(check)")
        continue
      }
      #expect(fixtureHex(try log.treeRoot(size: line.checkpoint)) == line.rootHex, "root of \(line.checkpoint)")
      #expect(check.isValid, "checkpoint \(line.checkpoint): \(check)")
      #expect(check.compactedThrough == FeaturesFixture.cut)
    }
    let roots = Dictionary(uniqueKeysWithValues: expected.checkpoints.map { ($0.checkpoint, fixtureBytes(hex: $0.rootHex)) })
    for line in expected.proofs {
      let hashes = line.hashes.map(fixtureBytes(hex:))
      let root = try roots[line.size] ?? log.treeRoot(size: line.size)
      if let seq = line.seq {
        #expect(try log.inclusionProof(seq: seq, treeSize: line.size) == hashes, "inclusion of \(seq) in \(line.size)")
        let value = try #require(try log.storedValue(seq: seq))
        try MerkleTree.verifyInclusion(
          leafHash: MerkleHash.leaf(seq: seq, value: value), index: seq - 1, size: line.size, proof: hashes, root: root)
      } else {
        let from = try #require(line.from)
        #expect(try log.consistencyProof(from: from, to: line.size) == hashes, "consistency \(from) → \(line.size)")
        let oldRoot = try roots[from] ?? log.treeRoot(size: from)
        try MerkleTree.verifyConsistency(oldSize: from, newSize: line.size, oldRoot: oldRoot, newRoot: root, proof: hashes)
      }
    }
    #expect(expected.proofs.contains { $0.seq != nil } && expected.proofs.contains { $0.from != nil })

    let committed = try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory(name).path)
    #expect(committed.sorted() == ["data.mdb", "expected.jsonl"])
  }

  /// The entries are the plan's, byte for byte; the snapshots hold the plan's states and undo stacks;
  /// folding from the snapshot at the anchor reaches the recorded count.
  @Test func holdsThePlanAndFoldsToTheRecordedStates() throws {
    let expected = try FixtureExpectations(directory: Fixtures.directory(Self.name))
    var model = FeaturesModel()
    var stacksAt: [UInt64: FixtureUndoStacks] = [:]
    var kinds: Set<String> = []
    let lines = Dictionary(uniqueKeysWithValues: expected.entries.map { ($0.seq, $0) })
    for seq in FeaturesFixture.firstPart.lowerBound...FeaturesFixture.secondPart.upperBound {
      let entry = try FeaturesFixture.newEntry(seq, target: try model.target(of: seq))
      try model.apply(seq)
      if FeaturesFixture.snapshots[seq] != nil { stacksAt[seq] = model.stacks }
      if seq == FeaturesFixture.firstPart.upperBound { model.compact(at: FeaturesFixture.cut) }
      guard seq > FeaturesFixture.cut else { continue }
      let line = try #require(lines[seq], "entry \(seq) is not in expected.jsonl")
      kinds.insert(line.kind)
      #expect(line.kind == entry.kind.description, "entry \(seq): kind")
      #expect(line.flags == entry.flags.rawValue, "entry \(seq): flags")
      #expect(line.codec == entry.codec.description, "entry \(seq): codec")
      #expect(line.timestamp == entry.timestamp, "entry \(seq): timestamp")
      #expect(line.typeName == entry.typeName, "entry \(seq): type name")
      #expect(line.metadata == entry.metadata, "entry \(seq): metadata")
      #expect(line.payloadHex == fixtureHex(entry.payload), "entry \(seq): the plan encodes other bytes")
    }
    #expect(kinds == ["action", "restore", "undo", "redo", "marker"])
    #expect(model.state.count == expected.head.finalCount)
    for line in expected.snapshots {
      let codec = try #require(PayloadCodec(name: line.codec))
      let state = try codec.decode(CounterState.self, from: fixtureBytes(hex: line.stateHex))
      #expect(state == model.states[line.snapshot], "snapshot \(line.snapshot): state")
      let stacks = try codec.decode(FixtureUndoStacks.self, from: fixtureBytes(hex: line.auxiliaryHex))
      #expect(stacks == stacksAt[line.snapshot], "snapshot \(line.snapshot): undo stacks")
      #expect(stacks.undo.allSatisfy { $0 < line.snapshot } && stacks.redo.allSatisfy { $0 < line.snapshot })
    }
    #expect(expected.snapshots.contains { !fixtureBytes(hex: $0.auxiliaryHex).isEmpty })
  }

  /// A later version opens the fixture for writing, appends, signs and still proves the old checkpoints.
  @Test func stillExtendsAndProvesItsCheckpoints() throws {
    let temporary = try TemporaryDirectory()
    defer { temporary.remove() }
    let expected = try FixtureExpectations(directory: Fixtures.directory(Self.name))
    let copy = try Fixtures.copy(Self.name, into: temporary)
    let writer = try ActionLog(
      directory: copy, access: .readWrite, options: .init(durability: .full, flushInterval: nil, appID: FeaturesFixture.appID))
    defer { try? writer.close() }
    let last = FeaturesFixture.secondPart.upperBound
    try writer.append(
      contentsOf: [
        try NewEntry(encoding: CounterAction.set(7), typeName: "set", codec: .cbor),
        try NewEntry(kind: .restore, encoding: FixtureJumpTarget(target: last), typeName: "restore", codec: .cbor),
      ])
    let note = try writer.signCheckpoint(with: try FeaturesFixture.signer())
    #expect(try Checkpoint(parsing: note.text).size == last + 2)
    #expect(try writer.verify().isValid)
    let newest = try #require(expected.checkpoints.last)
    let old = try #require(try writer.checkpoints().first { try Checkpoint(parsing: $0.text).size == newest.checkpoint })
    #expect(try writer.verify(checkpoint: old, verifier: try FeaturesFixture.signer().verifier).isValid)
    let proof = try writer.consistencyProof(from: newest.checkpoint, to: last + 2)
    try MerkleTree.verifyConsistency(
      oldSize: newest.checkpoint, newSize: last + 2, oldRoot: fixtureBytes(hex: newest.rootHex),
      newRoot: try Checkpoint(parsing: note.text).rootHash, proof: proof)
  }
}
