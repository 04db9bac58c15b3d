import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

/// The cross-language check of the tree: Tests/python/check_tree.py, written from
/// docs/log-format.md §9 alone, recomputes the leaves, the stored subtrees and the root of a log
/// written here, and verifies proofs and a checkpoint signature produced here.
@Suite struct TreePythonTests {
  static let script = Repository.file("Tests/python/check_tree.py")
  static let isAvailable: Bool =
    (try? PythonReader.python(["-c", "import lmdb, cryptography.hazmat.primitives.asymmetric.ed25519"]).status) == 0

  @Test(.enabled(if: isAvailable, "needs python3 with lmdb and cryptography (tools/setup-tests)"))
  func pythonVerifiesTheTreeProofsAndACheckpointFromTheSpecification() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.child("log"), options: .init(appID: "ledger/app ü"))
    for n in 1...45 {
      try log.append(try NewEntry(encoding: "entry \(n)", typeName: "text", metadata: ["n": "\(n)"], codec: .cbor))
    }
    let signer = try NoteSigner(name: "ledger.example/log", seed: Array(repeating: 5, count: 32))
    let note = try log.signCheckpoint(with: signer)
    func hexList(_ hashes: [[UInt8]]) -> String {
      "[" + hashes.map { "\"" + $0.map { String(format: "%02x", $0) }.joined() + "\"" }.joined(separator: ",") + "]"
    }
    let inclusion = try log.inclusionProof(seq: 29, treeSize: 45)
    let consistency = try log.consistencyProof(from: 13, to: 45)
    try log.close()
    var noteJSON = ""
    for scalar in String(decoding: note.formatted, as: UTF8.self).unicodeScalars {
      switch scalar {
      case "\n": noteJSON += "\\n"
      case "\"": noteJSON += "\\\""
      case "\\": noteJSON += "\\\\"
      default: noteJSON.unicodeScalars.append(scalar)
      }
    }
    let input = """
      {"checkpoint": "\(noteJSON)", "verifierKey": "\(signer.verifier.text)",
       "inclusion": {"seq": 29, "treeSize": 45, "proof": \(hexList(inclusion))},
       "consistency": {"from": 13, "to": 45, "proof": \(hexList(consistency))}}
      """
    let file = dir.child("input.json")
    try Data(input.utf8).write(to: file)
    let result = try PythonReader.python([Self.script.path, dir.child("log").path, file.path])
    #expect(result.status == 0, "\(result.output)")
    #expect(result.output == "ok\n")

    // The script is no rubber stamp: one changed proof hash fails it, by name.
    var flipped = inclusion
    flipped[0][0] ^= 0x01
    try Data(input.replacingOccurrences(of: hexList(inclusion), with: hexList(flipped)).utf8).write(to: file)
    let refused = try PythonReader.python([Self.script.path, dir.child("log").path, file.path])
    #expect(refused.status == 1)
    #expect(refused.output == "the inclusion proof of entry 29 in 45 does not verify\n")
  }
}
