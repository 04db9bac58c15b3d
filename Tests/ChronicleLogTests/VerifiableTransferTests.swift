import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// Exports, imports, compactions and salvages keep a log verifiable against its signed checkpoints.
@Suite struct VerifiableTransferTests {
  private let signer = try! NoteSigner(name: "chronicle.test/transfer", seed: Array(repeating: 7, count: 32))

  private func entry(_ n: UInt64) throws -> NewEntry {
    try NewEntry(encoding: "payload-\(n)", typeName: "text", metadata: ["n": "\(n)"], codec: n % 2 == 0 ? .json : .cbor)
  }

  /// Appends entries up to `last`, signing a checkpoint at each of `sizes` on the way and a
  /// snapshot at each of `snapshots`.
  private func grow(_ log: ActionLog, to last: UInt64, checkpoints sizes: Set<UInt64>, snapshots: Set<UInt64> = [])
    throws
  {
    var seq = try log.head().seq
    while seq < last {
      seq += 1
      try log.append(try entry(seq))
      if snapshots.contains(seq) {
        try log.writeSnapshot(at: seq, state: Array("state \(seq)".utf8), codec: .json, schemaVersion: 1)
      }
      if sizes.contains(seq) { try log.signCheckpoint(with: signer) }
    }
  }

  /// Checks every stored checkpoint: those of `anchor` entries and more verify against the log;
  /// a consistency proof from every one to the newest checkpoint verifies against their roots.
  private func expectCheckpointsHold(_ log: ActionLog, sizes: [UInt64], sourceLocation: SourceLocation = #_sourceLocation)
    throws
  {
    let notes = try log.checkpoints()
    let checkpoints = try notes.map { try Checkpoint(parsing: $0.text) }
    #expect(checkpoints.map(\.size) == sizes, sourceLocation: sourceLocation)
    let anchor = try log.meta().anchor.seq
    guard let newest = checkpoints.last else { return }
    for (note, checkpoint) in zip(notes, checkpoints) {
      if checkpoint.size >= anchor {
        let result = try log.verify(checkpoint: note, verifier: signer.verifier)
        #expect(result.isValid, "checkpoint \(checkpoint.size): \(result)", sourceLocation: sourceLocation)
        #expect(try log.treeRoot(size: checkpoint.size) == checkpoint.rootHash, sourceLocation: sourceLocation)
      }
      do {
        try MerkleTree.verifyConsistency(
          oldSize: checkpoint.size, newSize: newest.size, oldRoot: checkpoint.rootHash, newRoot: newest.rootHash,
          proof: try log.consistencyProof(from: checkpoint.size, to: newest.size))
      } catch {
        Issue.record("consistency from \(checkpoint.size) to \(newest.size): \(error)", sourceLocation: sourceLocation)
      }
    }
  }

  private func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

  // MARK: - Compaction

  @Test func compactionKeepsWhatCheckpointsBelowAtAndAboveAnUnalignedAnchorNeed() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let below: [UInt64] = [1, 2, 3, 5, 7, 8, 15, 16, 17, 24, 31, 33, 45, 50, 64, 77, 90, 92]
    let above: [UInt64] = [93, 94, 100, 111, 128, 150]
    let sizes = below + above
    var log = try ActionLog(directory: dir.url, options: .init(appID: "ledger"))
    try grow(log, to: 150, checkpoints: Set(sizes), snapshots: [93, 140])
    try expectCheckpointsHold(log, sizes: sizes)
    var roots: [UInt64: [UInt8]] = [:]
    for size in UInt64(93)...150 { roots[size] = try log.treeRoot(size: size) }
    try log.close()

    // 93 = 64 + 16 + 8 + 4 + 1: no stored subtree ends at it.
    let report = try ActionLog.compact(directory: dir.url, before: 93, disposal: .discard)
    #expect(report.cut == 93)
    log = try ActionLog(directory: dir.url)
    #expect(try log.verify().isValid)
    try expectCheckpointsHold(log, sizes: sizes)
    for size in UInt64(93)...150 { #expect(try log.treeRoot(size: size) == roots[size], "size \(size)") }
    // Checkpoints below the anchor are checked against the hashes that commit to their entries.
    for note in try log.checkpoints() {
      #expect(try log.verify(checkpoint: note, verifier: signer.verifier).isValid, "\(note.text)")
    }

    // A second compaction keeps what the first one kept for the older checkpoints.
    try grow(log, to: 160, checkpoints: [160])
    try log.close()
    try ActionLog.compact(directory: dir.url, before: 150, disposal: .discard)
    log = try ActionLog(directory: dir.url)
    defer { try? log.close() }
    #expect(try log.meta().anchor.seq == 140)
    #expect(try log.verify().isValid)
    try expectCheckpointsHold(log, sizes: sizes + [160])
  }

  @Test func aCompactionTheTreeCannotSupplyFailsAndChangesNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var log = try ActionLog(directory: dir.url, options: .init(appID: "ledger"))
    try grow(log, to: 21, checkpoints: [], snapshots: [21])
    try log.close()
    try ActionLog.compact(directory: dir.url, before: 21, disposal: .discard)
    log = try ActionLog(directory: dir.url)
    try grow(log, to: 45, checkpoints: [25, 45], snapshots: [40])
    try log.close()
    // The hash of entry 21, which the first compaction kept (its entry is gone), is lost.
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    try env.write { txn in
      let tree = try txn.openDatabase(named: "tree")
      #expect(try txn.delete(forKey: [0] + key(20), in: tree))
    }
    env.close()
    let before = try RawDump(dir.url)
    let treeBefore = try RawDump.treeDatabase("tree", of: dir.url)
    let archive = dir.child("archive.jsonl")
    // The checkpoint of 25 needs the hash of entries 17…24, which needs entry 21's.
    let error = #expect(throws: TreeError.self) {
      try ActionLog.compact(directory: dir.url, before: 40, disposal: .archive(archive))
    }
    let message = error.map { "\($0)" } ?? ""
    #expect(message.contains("entries 17…24 (level 3, index 2)"), "\(message)")
    #expect(message.contains("nothing was changed"), "\(message)")
    #expect(try RawDump(dir.url) == before)
    #expect(try RawDump.treeDatabase("tree", of: dir.url) == treeBefore)
    #expect(!FileManager.default.fileExists(atPath: archive.path), "no archive is written for a compaction that cannot be done")
  }

  @Test func aLogCompactedBeforeItHadATreeStillCompacts() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var log = try ActionLog(directory: dir.url)
    try grow(log, to: 60, checkpoints: [], snapshots: [21, 50])
    try log.close()
    try ActionLog.compact(directory: dir.url, before: 21, disposal: .discard)
    // As an older version leaves it: entries removed, no tree hash at all.
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    try env.write { txn in try txn.empty(try txn.openDatabase(named: "tree")) }
    env.close()
    try ActionLog.compact(directory: dir.url, before: 50, disposal: .discard)
    log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    #expect(try log.meta().anchor.seq == 50)
    #expect(try log.verify().isValid)
  }

  // MARK: - Export and import

  @Test func aFullExportOfACompactedLogImportsWithItsIdentityTreeAndCheckpoints() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let original = dir.child("original")
    let sizes: [UInt64] = [5, 13, 21, 37, 40, 64, 100]
    var log = try ActionLog(directory: original, options: .init(appID: "ledger ✓"))
    try grow(log, to: 100, checkpoints: Set(sizes), snapshots: [37])
    try log.close()
    try ActionLog.compact(directory: original, before: 37, disposal: .discard)

    log = try ActionLog(directory: original, access: .readOnly)
    let export = dir.child("export.jsonl")
    let written = try log.export(to: export)
    #expect(written.checkpoints == sizes)
    #expect(written.logID == (try log.logID()))
    #expect(written.treeHashes > 0)
    let imported = dir.child("imported")
    let report = try ActionLog.importLog(from: export, into: imported)
    #expect(report.checkpoints == sizes)
    #expect(try RawDump(imported) == RawDump(original), "entries, snapshots and meta, the log id included")
    #expect(try RawDump.treeDatabase("tree", of: imported) == RawDump.treeDatabase("tree", of: original))
    #expect(try RawDump.treeDatabase("checkpoints", of: imported) == RawDump.treeDatabase("checkpoints", of: original))
    let copy = try ActionLog(directory: imported, access: .readOnly)
    #expect(try copy.origin() == log.origin())
    #expect(try copy.verify().isValid)
    for size in UInt64(37)...100 { #expect(try copy.treeRoot(size: size) == log.treeRoot(size: size), "size \(size)") }
    try expectCheckpointsHold(copy, sizes: sizes)
    try copy.close()
    try log.close()

    // The imported log goes on as the original would.
    let writer = try ActionLog(directory: imported)
    defer { try? writer.close() }
    try grow(writer, to: 110, checkpoints: [110])
    try expectCheckpointsHold(writer, sizes: sizes + [110])
  }

  @Test func aPartialExportCarriesTheCheckpointsItsEntriesProduce() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let original = dir.child("original")
    let log = try ActionLog(directory: original, options: .init(appID: "ledger"))
    try grow(log, to: 80, checkpoints: [10, 33, 50, 80])
    let export = dir.child("export.jsonl")
    let written = try log.export(to: export, through: 50)
    #expect(written.checkpoints == [10, 33, 50], "the checkpoint of 80 covers entries the export does not hold")
    let imported = dir.child("imported")
    try ActionLog.importLog(from: export, into: imported)
    let copy = try ActionLog(directory: imported, access: .readOnly)
    defer { try? copy.close() }
    #expect(try copy.logID() == log.logID())
    #expect(try copy.treeSize == 50)
    try expectCheckpointsHold(copy, sizes: [10, 33, 50])
    try log.close()
  }

  /// The export's lines as JSON objects.
  private func lines(_ file: URL) throws -> [[String: Any]] {
    try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
      try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
    }
  }

  private func write(_ objects: [[String: Any]], to file: URL) throws {
    let text = try objects.map {
      String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self)
    }.joined(separator: "\n") + "\n"
    try Data(text.utf8).write(to: file)
  }

  @Test func treeAndCheckpointLinesThatDoNotFitTheEntriesAreRefused() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let original = dir.child("original")
    var log = try ActionLog(directory: original, options: .init(appID: "ledger"))
    try grow(log, to: 60, checkpoints: [10, 30, 60], snapshots: [21])
    try log.close()
    try ActionLog.compact(directory: original, before: 21, disposal: .discard)
    log = try ActionLog(directory: original, access: .readOnly)
    let export = dir.child("export.jsonl")
    try log.export(to: export)
    try log.close()
    let objects = try lines(export)
    #expect(objects[0]["chronicleExport"] as? Int == 2)
    #expect((objects[0]["logID"] as? String)?.count == 32)
    #expect(objects[0]["checkpoints"] as? [Int] == [10, 30, 60])
    let treeLines = objects.indices.filter { objects[$0]["record"] as? String == "tree" }
    #expect(treeLines.first == 1, "tree lines follow the header")
    #expect(objects[0]["tree"] as? Int == treeLines.count)
    #expect(objects.last?["record"] as? String == "checkpoint")

    func refusal(_ change: (inout [[String: Any]]) -> Void) -> String {
      var changed = objects
      change(&changed)
      let file = dir.child("changed-\(UUID().uuidString).jsonl")
      do {
        try write(changed, to: file)
        try ActionLog.checkExport(at: file)
        return "accepted"
      } catch {
        return "\(error)"
      }
    }
    // A changed tree hash: the entries still chain from the anchor, but the checkpoints' roots differ.
    let frontierLine = try #require(treeLines.first { objects[$0]["level"] as? Int == 0 })
    let changedTree = refusal { lines in
      let hash = lines[frontierLine]["hash"] as! String
      lines[frontierLine]["hash"] = String(hash.reversed())
    }
    #expect(changedTree.contains("the checkpoint of size 30 does not match the tree of the exported entries"), "\(changedTree)")
    // A tree line removed: the header's count no longer fits.
    #expect(refusal { $0.remove(at: frontierLine) }.contains("tree lines"))
    // A checkpoint of another log.
    let lastLine = objects.count - 1
    let relabelled = refusal { lines in
      lines[lastLine]["note"] = (lines[lastLine]["note"] as! String).replacingOccurrences(of: "chronicle/ledger/", with: "chronicle/other/")
    }
    #expect(relabelled.contains("not of this log"), "\(relabelled)")
    // A checkpoint line removed.
    #expect(refusal { $0.removeLast() }.contains("promises checkpoints of sizes [10, 30, 60]"))

    // A version-1 export (no identifier, tree or checkpoints) of a log that was not compacted still imports.
    let fresh = dir.child("fresh")
    let plain = try ActionLog(directory: fresh, options: .init(appID: "ledger"))
    try grow(plain, to: 20, checkpoints: [20])
    try plain.export(to: dir.child("v2.jsonl"))
    var old = try lines(dir.child("v2.jsonl")).filter { $0["record"] as? String != "checkpoint" }
    old[0]["chronicleExport"] = 1
    for field in ["logID", "tree", "checkpoints"] { old[0][field] = nil }
    try write(old, to: dir.child("v1.jsonl"))
    let imported = dir.child("from-v1")
    let report = try ActionLog.importLog(from: dir.child("v1.jsonl"), into: imported)
    #expect(report.logID == nil)
    let copy = try ActionLog(directory: imported)
    #expect(try copy.treeRoot(size: 20) == plain.treeRoot(size: 20), "the tree is built from the entries")
    let id = try #require(try copy.logID())
    #expect(id != (try plain.logID()), "a version-1 export gives the log a fresh identifier")
    try copy.close()
    try plain.close()
  }

  // MARK: - Salvage

  @Test func salvageKeepsTheLogIDAndOnlyTheCheckpointsItsEntriesProduce() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let damaged = dir.child("damaged")
    var log = try ActionLog(directory: damaged, options: .init(appID: "ledger"))
    try grow(log, to: 60, checkpoints: [20, 40, 60], snapshots: [21])
    try log.close()
    try ActionLog.compact(directory: damaged, before: 21, disposal: .discard)
    log = try ActionLog(directory: damaged, access: .readOnly)
    let id = try log.logID()
    let notes = try log.checkpoints()
    try log.close()
    // Entry 45's body changed: the chain breaks there.
    let env = try Environment(path: damaged.path, configuration: .init(maxDatabases: 8))
    try env.write { txn in
      let entries = try txn.openDatabase(named: "entries")
      var value = try #require(try txn.get(forKey: key(45), in: entries))
      value[value.count - 40] ^= 1
      try txn.put(value, forKey: key(45), in: entries)
    }
    env.close()

    let salvaged = dir.child("salvaged")
    let report = try ActionLog.salvage(from: damaged, into: salvaged)
    #expect(report.head.seq == 44)
    #expect(report.checkpointsKept == [20, 40])
    #expect(report.checkpointsDropped.map(\.size) == [60])
    #expect(report.checkpointsDropped.first?.reason == "it covers 60 entries, more than the 44 that survived")
    #expect(report.description.contains("dropped checkpoint of size 60"))
    #expect(!report.isComplete)
    let copy = try ActionLog(directory: salvaged, access: .readOnly)
    defer { try? copy.close() }
    #expect(try copy.logID() == id)
    #expect(try copy.checkpoints() == Array(notes.prefix(2)))
    #expect(try copy.verify().isValid)
    #expect(try copy.verify(checkpoint: notes[1], verifier: signer.verifier).isValid)
    try expectCheckpointsHold(copy, sizes: [20, 40])
  }
}
