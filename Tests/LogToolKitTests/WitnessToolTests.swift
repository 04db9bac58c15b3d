import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

/// `logtool witness` and `checkpoint --key` with a witness's key, run as the built `logtool`: the
/// witness cosigns a first checkpoint and one extending it, keeps its state, refuses a forked or
/// older checkpoint leaving the state as it was, refuses keys of the wrong type; auditors check
/// the cosigned note with the witness's verifier key; and an independent Python check
/// (Tests/python/check_cosignature.py) verifies the printed cosignatures.
@Suite struct WitnessToolTests {
  /// Whether `python3` runs with the `cryptography` package.
  static let pythonIsAvailable: Bool =
    (try? python(["-c", "import cryptography.hazmat.primitives.asymmetric.ed25519"]).status) == 0

  /// Runs `python3 arguments…`.
  static func python(_ arguments: [String]) throws -> ChildResult {
    try ChildProcess.run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments)
  }

  /// Runs Tests/python/check_cosignature.py on `note` and the witness's verifier key (and `line`).
  static func pythonChecks(note: String, vkey: String, line: String? = nil) throws -> ChildResult {
    let script = Repository.file("Tests/python/check_cosignature.py").path
    return try python([script, note, vkey] + (line.map { [$0] } ?? []))
  }

  /// A scratch directory with an owner's key (`owner.key`, `owner.vkey`), a witness's key
  /// (`witness.key`, `witness.vkey`), both made by `keygen`, and a log of 30 entries (`a`).
  struct Setup {
    var scratch: TemporaryDirectory
    func path(_ name: String) -> String { scratch.child(name).path }
    var log: String { path("a") }

    init() throws {
      scratch = try TemporaryDirectory(prefix: "logtool-witness")
      let owner = try Tool.run(["keygen", "ledger.example/log", "--out", scratch.child("owner").path])
      #expect(owner.status == 0, "\(owner.stderr)")
      let witness = try Tool.run(["keygen", "witness.example/w1", "--witness", "--out", scratch.child("witness").path])
      #expect(witness.status == 0, "\(witness.stderr)")
      try makeLog(at: scratch.child("a"), count: 30, snapshotEvery: 1000)
    }

    /// `logtool witness` for `checkpoint` with the setup's keys and state, plus `extra`.
    func witness(_ checkpoint: String, _ extra: [String] = [], key: String = "witness.key") throws -> ChildResult {
      try Tool.run(
        [
          "witness", "--checkpoint", path(checkpoint), "--key", path(key), "--log-key", path("owner.vkey"),
          "--state", path("state"),
        ] + extra)
    }

    /// Signs the log at `log` with the owner's key, writing `out`.
    func sign(_ log: String, out: String) throws {
      let signed = try Tool.run(["checkpoint", path(log), "--key", path("owner.key"), "--out", path(out)])
      #expect(signed.status == 0, "\(signed.stderr)")
    }

    /// Every file of the witness's state directory and its bytes.
    func state() throws -> [String: Data] {
      var files: [String: Data] = [:]
      for name in try FileManager.default.contentsOfDirectory(atPath: path("state")) {
        files[name] = try Data(contentsOf: scratch.child("state").appendingPathComponent(name))
      }
      return files
    }
  }

  @Test func theWitnessCosignsWhatExtendsItsCheckpointAndRefusesTheRest() throws {
    let setup = try Setup()
    defer { setup.scratch.remove() }

    // The first checkpoint of an origin: cosigned without a proof, the cosignature line printed last.
    try setup.sign("a", out: "a30.note")
    let first = try setup.witness("a30.note", ["--out", setup.path("a30.cosigned")])
    #expect(first.status == 0, "\(first.stderr)")
    let firstLine = try #require(first.stdout.split(separator: "\n").last.map(String.init))
    #expect(firstLine.hasPrefix("\u{2014} witness.example/w1 "))
    let cosigned = try SignedNote(parsing: Array(try Data(contentsOf: setup.scratch.child("a30.cosigned"))))
    #expect(cosigned.signatures.count == 2 && cosigned.signatures[1].line == firstLine + "\n")
    #expect(cosigned.signatures[1].signature.count == 72, "key ID, then 8 bytes of time and 64 of signature")
    let witnessVerifier = try NoteVerifier(
      parsing: try String(contentsOfFile: setup.path("witness.vkey"), encoding: .utf8).trimmingCharacters(
        in: .whitespacesAndNewlines))
    try Cosignature(cosigned.signatures[1]).verify(checkpointText: cosigned.text, by: witnessVerifier)

    // The state: one checkpoint file per origin, holding the checkpoint cosigned.
    let kept = try setup.state().filter { $0.key.hasSuffix(".checkpoint") }
    #expect(kept.count == 1)
    #expect(kept.first?.value == (try Data(contentsOf: setup.scratch.child("a30.note"))))

    // A fork: a copy of the log at 30 entries, then different entries in each.
    try FileManager.default.createDirectory(at: setup.scratch.child("b"), withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      at: setup.scratch.child("a/data.mdb"), to: setup.scratch.child("b/data.mdb"))
    try makeLog(at: setup.scratch.child("a"), count: 10, snapshotEvery: 1000, payloadBytes: 64)
    try makeLog(at: setup.scratch.child("b"), count: 10, snapshotEvery: 1000, payloadBytes: 65)

    // A checkpoint extending the held one, with the proof `consistency --json` printed: cosigned.
    try setup.sign("a", out: "a40.note")
    let proof = try Tool.run(["consistency", setup.log, "30", setup.path("a40.note"), "--json"])
    #expect(proof.status == 0, "\(proof.stderr)")
    try Data(proof.stdout.utf8).write(to: setup.scratch.child("30-40.json"))
    let second = try setup.witness(
      "a40.note", ["--proof", setup.path("30-40.json"), "--out", setup.path("a40.cosigned"), "--json"])
    #expect(second.status == 0, "\(second.stderr)")
    let object = try JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any]
    #expect(object?["heldSize"] as? Int == 30 && object?["treeSize"] as? Int == 40)
    #expect(object?["witness"] as? String == witnessVerifier.text)
    let held40 = try setup.state()
    let a40 = try Data(contentsOf: setup.scratch.child("a40.note"))
    #expect(held40.filter { $0.key.hasSuffix(".checkpoint") }.first?.value == a40)

    // The auditor checks the cosigned note with the witness's verifier key (and the owner's).
    for key in ["witness.vkey", "owner.vkey"] {
      let verified = try Tool.run(
        ["verify", setup.log, "--checkpoint", setup.path("a40.cosigned"), "--key", setup.path(key)])
      #expect(verified.status == 0, "\(key): \(verified.stdout) \(verified.stderr)")
    }
    let proved = try Tool.run(
      ["prove", setup.log, "17", "--checkpoint", setup.path("a40.cosigned"), "--out", setup.path("e17.json")])
    #expect(proved.status == 0, "\(proved.stderr)")
    let audited = try Tool.run(
      [
        "audit", setup.path("e17.json"), "--checkpoint", setup.path("a40.cosigned"), "--key",
        setup.path("witness.vkey"),
      ])
    #expect(audited.status == 0, "\(audited.stdout) \(audited.stderr)")

    // The forked log's checkpoint of the same size, and of a larger one: refused, state unchanged.
    try setup.sign("b", out: "b40.note")
    let sameSize = try setup.witness("b40.note")
    #expect(sameSize.status == 1, "\(sameSize.stdout) \(sameSize.stderr)")
    #expect(sameSize.errorLines.count == 1 && sameSize.stdout.isEmpty)
    #expect(sameSize.stderr.contains("size 40") && sameSize.stderr.contains("chronicle/tests/"), "\(sameSize.stderr)")
    try makeLog(at: setup.scratch.child("b"), count: 5, snapshotEvery: 1000, payloadBytes: 65)
    try setup.sign("b", out: "b45.note")
    for extra in [["--log", setup.path("b")], []] {
      let forked = try setup.witness("b45.note", extra)
      if extra.isEmpty {
        // Without a proof the witness asks for one (exit 2), naming the sizes.
        #expect(forked.status == 2, "\(forked.stderr)")
        #expect(forked.stderr.contains("size 40") && forked.stderr.contains("to 45"), "\(forked.stderr)")
      } else {
        #expect(forked.status == 1, "\(forked.stdout) \(forked.stderr)")
        #expect(forked.errorLines.count == 1)
        #expect(
          forked.stderr.contains("size 45") && forked.stderr.contains("size 40 the witness holds"), "\(forked.stderr)")
      }
    }
    // The older checkpoint again: refused as older.
    let older = try setup.witness("a30.note", ["--log", setup.log])
    #expect(older.status == 1)
    #expect(older.stderr.contains("size 30 is older than the one held (40)"), "\(older.stderr)")
    #expect(try setup.state() == held40, "a refusal leaves the state as it was")

    // A later checkpoint of the same log, proven from the log itself: cosigned.
    try makeLog(at: setup.scratch.child("a"), count: 7, snapshotEvery: 1000)
    try setup.sign("a", out: "a47.note")
    let third = try setup.witness("a47.note", ["--log", setup.log])
    #expect(third.status == 0, "\(third.stderr)")
    #expect(third.stdout.contains("40: extended"), "\(third.stdout)")

    // Keys of the wrong type: refused before the state is read, naming the file and both types.
    let wrongKey = try setup.witness("a47.note", ["--log", setup.log], key: "owner.key")
    #expect(wrongKey.status == 2)
    #expect(wrongKey.errorLines.count == 1)
    #expect(
      wrongKey.stderr.contains(setup.path("owner.key")) && wrongKey.stderr.contains("type 0x01")
        && wrongKey.stderr.contains("type 0x04"), "\(wrongKey.stderr)")
    let wrongLogKey = try Tool.run(
      [
        "witness", "--checkpoint", setup.path("a47.note"), "--key", setup.path("witness.key"), "--log-key",
        setup.path("witness.vkey"), "--state", setup.path("state"),
      ])
    #expect(wrongLogKey.status == 2)
    #expect(
      wrongLogKey.stderr.contains(setup.path("witness.vkey")) && wrongLogKey.stderr.contains("type 0x04")
        && wrongLogKey.stderr.contains("type 0x01"), "\(wrongLogKey.stderr)")

    // A key of a type no one knows, for any command taking a key.
    let unknown = try String(contentsOfFile: setup.path("owner.vkey"), encoding: .utf8).trimmingCharacters(
      in: .whitespacesAndNewlines)
    var parts = unknown.split(separator: "+", maxSplits: 2).map(String.init)
    var bytes = Array(Data(base64Encoded: parts[2])!)
    bytes[0] = 0x02
    parts[2] = Data(bytes).base64EncodedString()
    try Data((parts.joined(separator: "+") + "\n").utf8).write(to: setup.scratch.child("odd.vkey"))
    let odd = try Tool.run(
      ["verify", setup.log, "--checkpoint", setup.path("a47.note"), "--key", setup.path("odd.vkey")])
    #expect(odd.status == 2)
    #expect(odd.stderr.contains(setup.path("odd.vkey")) && odd.stderr.contains("type 0x02"), "\(odd.stderr)")
  }

  @Test func checkpointSignsWithAWitnessKeyAsACosignature() throws {
    let setup = try Setup()
    defer { setup.scratch.remove() }
    let signed = try Tool.run(
      ["checkpoint", setup.log, "--key", setup.path("witness.key"), "--out", setup.path("w.note")])
    #expect(signed.status == 0, "\(signed.stderr)")
    let note = try SignedNote(parsing: Array(try Data(contentsOf: setup.scratch.child("w.note"))))
    #expect(note.signatures.count == 1 && note.signatures[0].signature.count == 72, "a cosignature line")
    let verified = try Tool.run(
      ["verify", setup.log, "--checkpoint", setup.path("w.note"), "--key", setup.path("witness.vkey")])
    #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    // The owner's key signed nothing here: a mix-up of files, exit 2.
    let owner = try Tool.run(
      ["verify", setup.log, "--checkpoint", setup.path("w.note"), "--key", setup.path("owner.vkey")])
    #expect(owner.status == 2)
    // The stored note is the one printed.
    let stored = try ActionLog(directory: setup.scratch.child("a"), access: .readOnly)
    defer { try? stored.close() }
    #expect(try stored.checkpoints().last == note)
  }

  @Test(.enabled(if: pythonIsAvailable, "needs python3 with cryptography (tools/setup-tests)"))
  func pythonVerifiesThePrintedCosignatures() throws {
    let setup = try Setup()
    defer { setup.scratch.remove() }
    try setup.sign("a", out: "a30.note")
    let cosigned = try setup.witness("a30.note", ["--out", setup.path("a30.cosigned")])
    #expect(cosigned.status == 0, "\(cosigned.stderr)")
    let line = try #require(cosigned.stdout.split(separator: "\n").last.map(String.init))
    let printed = try Self.pythonChecks(note: setup.path("a30.note"), vkey: setup.path("witness.vkey"), line: line)
    #expect(printed.status == 0 && printed.stdout == "ok\n", "\(printed.stdout) \(printed.stderr)")
    let inNote = try Self.pythonChecks(note: setup.path("a30.cosigned"), vkey: setup.path("witness.vkey"))
    #expect(inNote.status == 0 && inNote.stdout == "ok\n", "\(inNote.stdout) \(inNote.stderr)")

    // checkpoint --key with a witness's key: the stored note carries a cosignature Python accepts.
    let signed = try Tool.run(
      ["checkpoint", setup.log, "--key", setup.path("witness.key"), "--out", setup.path("w.note")])
    #expect(signed.status == 0, "\(signed.stderr)")
    let alone = try Self.pythonChecks(note: setup.path("w.note"), vkey: setup.path("witness.vkey"))
    #expect(alone.status == 0 && alone.stdout == "ok\n", "\(alone.stdout) \(alone.stderr)")

    // The check is no rubber stamp: the cosignature over another time, or another checkpoint, fails.
    var blob = Array(Data(base64Encoded: String(line.split(separator: " ").last!))!)
    blob[11] ^= 0x01
    let shifted = "\u{2014} witness.example/w1 " + Data(blob).base64EncodedString()
    let refused = try Self.pythonChecks(note: setup.path("a30.note"), vkey: setup.path("witness.vkey"), line: shifted)
    #expect(refused.status == 1 && refused.stdout.contains("does not verify"), "\(refused.stdout) \(refused.stderr)")
    let text = try String(contentsOfFile: setup.path("a30.note"), encoding: .utf8)
    try Data(text.replacingOccurrences(of: "\n30\n", with: "\n31\n").utf8).write(to: setup.scratch.child("31.note"))
    let other = try Self.pythonChecks(note: setup.path("31.note"), vkey: setup.path("witness.vkey"), line: line)
    #expect(other.status == 1 && other.stdout.contains("does not verify"), "\(other.stdout)")
  }
}
