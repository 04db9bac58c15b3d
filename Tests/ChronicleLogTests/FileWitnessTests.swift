import Foundation
import ChronicleTestTools
import Testing

@testable import ChronicleLog

@Suite struct FileWitnessTests {
  private let logKey = try! NoteSigner(name: "chronicle/test/01", seed: Array(repeating: 1, count: 32))
  private let witnessKey = try! NoteSigner(name: "witness.test/w", seed: Array(repeating: 2, count: 32), type: .cosignatureV1)

  private func leaves(_ prefix: String, _ count: Int) -> [[UInt8]] {
    (0..<count).map { MerkleHash.leaf(Array("\(prefix)\($0)".utf8)) }
  }

  private func subtree(_ leaves: [[UInt8]]) -> (Int, UInt64) throws -> [UInt8] {
    var frontier = MerkleFrontier()
    var stored: [String: [UInt8]] = [:]
    for leaf in leaves {
      for completed in frontier.append(leaf: leaf) { stored["\(completed.level)/\(completed.index)"] = completed.hash }
    }
    return { level, index in
      guard let hash = stored["\(level)/\(index)"] else { throw TreeError.outOfRange("\(level)/\(index)") }
      return hash
    }
  }

  private func signed(_ leaves: [[UInt8]]) throws -> SignedNote {
    let root = try MerkleTree.root(size: UInt64(leaves.count), subtree: subtree(leaves))
    var note = SignedNote(text: Checkpoint(origin: logKey.name, size: UInt64(leaves.count), rootHash: root).text)
    try note.sign(with: logKey)
    return note
  }

  @Test func cosignsGrowthAndRefusesInconsistentOlderOrUnsignedCheckpoints() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let witness = try FileWitness(directory: dir.child("witness"), signer: witnessKey, logs: [logKey.name: logKey.verifier])
    let honest = leaves("entry ", 20)
    let first = try signed(Array(honest.prefix(8)))
    let cosignature = try witness.add(checkpoint: first, oldSize: 0, consistencyProof: [])
    try cosignature.verify(checkpointText: first.text, by: witnessKey.verifier)

    // Growth with a valid proof is cosigned and becomes the held checkpoint, also for a new instance.
    let grown = try signed(honest)
    let proof = try MerkleTree.consistencyProof(from: 8, to: 20, subtree: subtree(honest))
    _ = try witness.add(checkpoint: grown, oldSize: 8, consistencyProof: proof)
    let reopened = try FileWitness(directory: dir.child("witness"), signer: witnessKey, logs: [logKey.name: logKey.verifier])
    #expect(try reopened.latest(origin: logKey.name) == grown)

    // A fork: the same first 8 entries, then others. Signed by the log's key, yet not consistent.
    let forked = Array(honest.prefix(8)) + leaves("forged ", 14)
    let forkNote = try signed(forked)
    let forkProof = try MerkleTree.consistencyProof(from: 20, to: 22, subtree: subtree(forked))
    do {
      _ = try reopened.add(checkpoint: forkNote, oldSize: 20, consistencyProof: forkProof)
      Issue.record("a fork was cosigned")
    } catch let error as TreeError {
      #expect("\(error)".contains("not consistent with the checkpoint of size 20"), "\(error)")
    }
    #expect(try reopened.latest(origin: logKey.name) == grown)

    // Older, wrong old size, unknown origin, unsigned: refused with the reason.
    let older = try signed(Array(honest.prefix(10)))
    #expect(throws: TreeError.self) { try reopened.add(checkpoint: older, oldSize: 20, consistencyProof: []) }
    #expect(throws: TreeError.self) { try reopened.add(checkpoint: grown, oldSize: 8, consistencyProof: proof) }
    var stranger = SignedNote(text: Checkpoint(origin: logKey.name, size: 21, rootHash: MerkleHash.emptyRoot).text)
    try stranger.sign(with: try NoteSigner.generate(name: logKey.name))
    do {
      _ = try reopened.add(checkpoint: stranger, oldSize: 20, consistencyProof: [])
      Issue.record("a checkpoint not signed by the log's key was cosigned")
    } catch let error as TreeError {
      #expect("\(error)".contains("no signature by"), "\(error)")
    }
    let otherWitness = try FileWitness(directory: dir.child("witness2"), signer: witnessKey, logs: [:])
    #expect(throws: TreeError.self) { try otherWitness.add(checkpoint: first, oldSize: 0, consistencyProof: []) }
  }
}
