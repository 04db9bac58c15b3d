import Chronicle
import Foundation
import ChronicleTestTools
import Testing

/// Two real processes adding checkpoints to one `FileWitness` directory at the same time
/// (`chronicle-log-probe witness-race`): neither loses or regresses the other's newest checkpoint.
@Suite struct WitnessRaceTests {
  // The synthetic log and keys of `witness-race`: leaf i is `entry i`, or `forged i` past leaf 8 of a fork.
  private let logKey = try! NoteSigner(name: "chronicle/race/01", seed: Array(repeating: 1, count: 32))
  private let witnessKey = try! NoteSigner(
    name: "witness.test/race", seed: Array(repeating: 2, count: 32), type: .cosignatureV1)

  /// The text of the honest checkpoint of the first `size` leaves.
  private func honestText(size: UInt64) throws -> String {
    let leaves = (0..<size).map { MerkleHash.leaf(Array("entry \($0)".utf8)) }
    let root = MerkleTree.root(size: size) { level, index in
      var hashes = Array(leaves[Int(index << UInt64(level))..<Int((index + 1) << UInt64(level))])
      while hashes.count > 1 {
        hashes = stride(from: 0, to: hashes.count, by: 2).map { MerkleHash.node(hashes[$0], hashes[$0 + 1]) }
      }
      return hashes[0]
    }
    return Checkpoint(origin: logKey.name, size: size, rootHash: root).text
  }

  @Test func twoProcessesNeverLoseOrRegressEachOthersCheckpoint() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    for trial in 0..<4 {
      let witnessDir = dir.child("witness-\(trial)")
      // The witness starts out holding the honest checkpoint of 16 entries: every fork (past leaf 8) is
      // inconsistent with whatever it holds from then on.
      let witness = try FileWitness(directory: witnessDir, signer: witnessKey, logs: [logKey.name: logKey.verifier])
      var start = SignedNote(text: try honestText(size: 16))
      try start.sign(with: logKey)
      _ = try witness.add(checkpoint: start, oldSize: 0, consistencyProof: [])

      let children = try (1...2).map { n in
        try ChildProcess(
          "chronicle-log-probe", ["witness-race", witnessDir.path, "\(trial * 2 + n)", "60"], errors: .capture)
      }
      var largest: UInt64 = 16
      var cosigned = 0
      for (n, child) in children.enumerated() {
        let result = child.finish(timeout: 60)
        #expect(result.status == 0, "trial \(trial) child \(n): \(result.stderr)")
        for line in result.stdout.split(separator: "\n") {
          let fields = line.split(separator: " ", maxSplits: 4).map(String.init)
          let size = try #require(UInt64(fields[1]), "\(line)")
          guard fields[0] == "cosigned" else {
            #expect(fields[0] == "refused", "\(line)")
            continue
          }
          #expect(fields[2] == "honest", "trial \(trial): a checkpoint inconsistent with the stored one was cosigned: \(line)")
          let cosignature = Cosignature(
            name: witnessKey.name, keyID: witnessKey.keyID, timestamp: try #require(UInt64(fields[3])),
            signature: Array(try #require(Data(base64Encoded: fields[4]))))
          #expect(throws: Never.self, "\(line)") {
            try cosignature.verify(checkpointText: try honestText(size: size), by: witnessKey.verifier)
          }
          largest = max(largest, size)
          cosigned += 1
        }
      }
      #expect(cosigned > 10, "trial \(trial): the processes made progress")
      // The newest stored checkpoint is the largest one cosigned: no process overwrote a larger one.
      let stored = try #require(try witness.latest(origin: logKey.name))
      #expect(stored.text == (try honestText(size: largest)), "trial \(trial): stored \(stored.text), largest \(largest)")
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: witnessDir.path).filter { $0.hasSuffix(".tmp") }
      #expect(leftovers.isEmpty, "\(leftovers)")
    }
  }
}
