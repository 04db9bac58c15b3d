import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

/// The verdicts of the audit tools are exact for every value a field can hold: a proof of the
/// first entries audits like any other, and a number is read as the number it is.
@Suite struct AuditVerdictTests {
  private func run(_ arguments: [String]) async -> ChildResult { await ExtremeValueToolTests.run(arguments) }

  /// `prove --out` writes documents for seq 1 and 2 (`seq` and `leafIndex` of 0, 1 and 2) that
  /// `audit` accepts: a JSON 0 or 1 is a number, not a boolean.
  @Test(arguments: [1, 2, 3, 16])
  func aProofOfAnEarlyEntryAudits(_ seq: Int) async throws {
    let setup = try TreeToolTests.setup(entries: 40)
    defer { setup.scratch.remove() }
    let checkpoint = setup.path("cp.note")
    let proof = setup.path("proof-\(seq).json")
    #expect(await run(["checkpoint", setup.log.path, "--key", setup.key, "--out", checkpoint]).status == 0)
    let proved = await run(["prove", setup.log.path, "\(seq)", "--checkpoint", checkpoint, "--out", proof])
    #expect(proved.status == 0, "\(proved.stderr)")
    let audit = await run(["audit", proof, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(audit.status == 0, "seq \(seq): \(audit.stdout) \(audit.stderr)")
  }

  /// Every integer field at 0, 1, 2, 2^53 + 1 and 2^64 − 1 is read exactly: the document parses, and the
  /// verdict is about the proof (exit 0 for the true values, 1 for others), never "not an integer";
  /// `true` is no integer.
  @Test func everyIntegerFieldIsReadExactly() async throws {
    let setup = try TreeToolTests.setup(entries: 40)
    defer { setup.scratch.remove() }
    let checkpoint = setup.path("cp.note")
    let proof = setup.path("proof.json")
    #expect(await run(["checkpoint", setup.log.path, "--key", setup.key, "--out", checkpoint]).status == 0)
    #expect(await run(["prove", setup.log.path, "2", "--checkpoint", checkpoint, "--out", proof]).status == 0)
    let original = try String(contentsOfFile: proof, encoding: .utf8)
    for (field, value) in [("seq", "2"), ("leafIndex", "1"), ("treeSize", "40")] {
      #expect(original.contains("\"\(field)\":\(value)"), "\(original)")
      for replacement in ["0", "1", "2", "9007199254740993", "18446744073709551615", "true"] {
        let edited = setup.path("edited.json")
        try original.replacingOccurrences(of: "\"\(field)\":\(value)", with: "\"\(field)\":\(replacement)")
          .write(toFile: edited, atomically: true, encoding: .utf8)
        let audit = await run(["audit", edited, "--checkpoint", checkpoint, "--key", setup.vkey])
        let what = "\(field) = \(replacement): \(audit.status) \(audit.stderr)"
        if replacement == "true" {
          #expect(audit.status == 2 && audit.stderr.contains("\"\(field)\" is not a non-negative integer"), "\(what)")
        } else if replacement == value {
          #expect(audit.status == 0, "\(what)")
        } else {
          #expect(!audit.stderr.contains("is not a non-negative integer"), "\(what)")
          #expect(audit.status == 1 || (field == "seq" && replacement == "0" && audit.status == 2), "\(what)")
        }
      }
    }
  }

  /// A forged note (its root replaced, the signature kept) on an untouched log: the verdict is the
  /// signature alone, never that the log was rewritten.
  @Test func aForgedNoteBlamesOnlyItsSignature() async throws {
    let setup = try TreeToolTests.setup(entries: 40)
    defer { setup.scratch.remove() }
    let checkpoint = setup.path("cp.note")
    #expect(await run(["checkpoint", setup.log.path, "--key", setup.key, "--out", checkpoint]).status == 0)
    var lines = try String(contentsOfFile: checkpoint, encoding: .utf8).split(
      separator: "\n", omittingEmptySubsequences: false
    ).map(String.init)
    lines[2] = Data(repeating: 0x11, count: 32).base64EncodedString()
    let forged = setup.path("forged.note")
    try lines.joined(separator: "\n").write(toFile: forged, atomically: true, encoding: .utf8)
    let result = await run(["verify", setup.log.path, "--checkpoint", forged, "--key", setup.vkey, "--json"])
    #expect(result.status == 1)
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    let checkpoints = object?["checkpoints"] as? [[String: Any]] ?? []
    let names = (checkpoints.first?["problems"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
    #expect(names == ["badSignature"], "\(result.stdout)")
  }

  /// `checkpoint` signs an encrypted log, with or without its key file, and one made by `rekey`:
  /// signing opens no record. The stored note verifies.
  @Test func anEncryptedLogSigns() async throws {
    let setup = try TreeToolTests.setup(entries: 10)
    defer { setup.scratch.remove() }
    let ring = try KeyRing([.random()])
    let keys = setup.path("log.keys")
    try ring.fileText.write(toFile: keys, atomically: true, encoding: .utf8)
    let encrypted = setup.scratch.child("encrypted")
    let log = try ActionLog(directory: encrypted, options: .init(durability: .full, appID: "tool", keyRing: ring))
    try log.append(contentsOf: (1...5).map { try NewEntry(encoding: $0, typeName: "n", codec: .json) })
    try log.close()
    for extra in [[], ["--key-file", keys]] {
      let signed = await run(["checkpoint", encrypted.path, "--key", setup.key] + extra)
      #expect(signed.status == 0, "\(signed.stderr)")
    }
    let newKeys = setup.path("new.keys")
    try KeyRing([.random()]).fileText.write(toFile: newKeys, atomically: true, encoding: .utf8)
    #expect(await run(["rekey", encrypted.path, "--key-file", keys, "--new-key-file", newKeys]).status == 0)
    let signed = await run(["checkpoint", encrypted.path, "--key", setup.key, "--out", setup.path("cp.note")])
    #expect(signed.status == 0, "\(signed.stderr)")
    let verified = await run(["verify", encrypted.path, "--checkpoint", setup.path("cp.note"), "--key", setup.vkey])
    #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
  }

  /// `verify --key-file` with a key file that does not hold the log's key fails, naming each
  /// entry and snapshot by seq and key id, where it used to say OK; `show --key-file` fails too.
  @Test func aRecordThatDoesNotOpenFailsVerifyWithTheKey() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let ring = try KeyRing([.random()])
    let keys = scratch.child("log.keys")
    let otherKeys = scratch.child("other.keys")
    try ring.fileText.write(to: keys, atomically: true, encoding: .utf8)
    try KeyRing([.random()]).fileText.write(to: otherKeys, atomically: true, encoding: .utf8)
    let url = scratch.child("log")
    let log = try ActionLog(directory: url, options: .init(durability: .full, appID: "tool", keyRing: ring))
    try log.append(contentsOf: (1...3).map { try NewEntry(encoding: $0, typeName: "n", codec: .json) })
    try log.writeSnapshot(at: 2, state: Array("{}".utf8), codec: .json, schemaVersion: 1)
    try log.close()
    let keyID = ring.current.idText

    #expect(await run(["verify", url.path]).status == 0)
    #expect(await run(["verify", url.path, "--key-file", keys.path]).status == 0)
    let wrong = await run(["verify", url.path, "--key-file", otherKeys.path])
    #expect(wrong.status == 1, "\(wrong.stdout)")
    for location in ["entry 1", "entry 2", "entry 3", "snapshot 2"] {
      #expect(wrong.stdout.contains("\(location): sealed with key \(keyID), which the key file does not hold"), "\(wrong.stdout)")
    }
    let shown = await run(["show", url.path, "2", "--key-file", otherKeys.path])
    #expect(shown.status == 1)
    #expect(shown.stderr.contains("is sealed with key \(keyID), which \(otherKeys.path) does not hold"), "\(shown.stderr)")
    #expect(await run(["show", url.path, "2"]).status == 0)
  }

  /// A log compacted by this version proves every checkpoint it stores with `verify --checkpoint`,
  /// the one signed at 20 before its compaction at 37 too, and proves 20 consistent with 100: the
  /// committed fixture of the features plan compacted that way.
  @Test func theFeaturesFixtureProvesItsOwnCheckpoints() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("features")
    try FileManager.default.copyItem(at: Fixtures.directory("v1-compacted-checkpoints"), to: log)
    // expected.jsonl: a line per stored checkpoint (its size and note), a tree line with the verifier keys.
    let lines = try String(contentsOf: log.appendingPathComponent("expected.jsonl"), encoding: .utf8)
      .split(separator: "\n").compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    let key = scratch.child("log.vkey")
    let verifierKeys = lines.compactMap { ($0["verifierKeys"] as? [String])?.first }
    let verifierKey = try #require(verifierKeys.first)
    try Data((verifierKey + "\n").utf8).write(to: key)
    var arguments = ["verify", log.path, "--key", key.path]
    var sizes: [Int] = []
    for line in lines {
      guard let size = line["checkpoint"] as? Int, let text = line["note"] as? String else { continue }
      let note = scratch.child("checkpoint-\(size)")
      try Data(text.utf8).write(to: note)
      arguments += ["--checkpoint", note.path]
      sizes.append(size)
    }
    #expect(sizes == [20, 37, 50, 80, 100])
    let verified = await run(arguments)
    #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    let consistent = await run(["consistency", log.path, "20", "100"])
    #expect(consistent.status == 0, "\(consistent.stdout) \(consistent.stderr)")
  }

  /// `consistency` from a checkpoint older than a compaction's cut names the hash it lacks and why,
  /// not a log without a tree (the committed fixture was compacted through entry 37 by the first
  /// compaction, which kept only the anchor's tree hashes, and signed at 20).
  @Test func aConsistencyProofFromBeforeTheCutNamesTheMissingHash() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("features")
    try FileManager.default.copyItem(at: Fixtures.directory("v1-features"), to: log)
    let result = await run(["consistency", log.path, "20", "100"])
    #expect(result.status == 2)
    #expect(result.errorLines.count == 1)
    #expect(!result.stderr.contains("has no Merkle tree"), "\(result.stderr)")
    #expect(result.stderr.contains("was compacted through entry 37"), "\(result.stderr)")
    #expect(result.stderr.contains("lacks a hash: the hash of entries 1…16 (level 4, index 0) is missing"), "\(result.stderr)")
  }
}
