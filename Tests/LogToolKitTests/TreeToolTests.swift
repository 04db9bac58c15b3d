import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `keygen`, `checkpoint`, `prove`, `consistency`, `verify --checkpoint` and `audit`, run as the
/// built `logtool`: golden outputs with a fixed key and log id, the tampering `verify --checkpoint`
/// names, tampered audits, and bad input that exits 2 and leaves the log as it was.
@Suite struct TreeToolTests {
  /// The checkpoint key of every test: a fixed seed, so signatures are the same on every run.
  static let signer = try! NoteSigner(name: "chronicle.test/log", seed: Array(repeating: 9, count: 32))
  /// A key that signed nothing.
  static let stranger = try! NoteSigner(name: "someone.else/log", seed: Array(repeating: 7, count: 32))
  /// The log id the tests give their logs, so that origins (and so signatures) are fixed too.
  static let logID: [UInt8] = Array(0..<16)

  /// The files of a prepared scratch directory.
  struct Setup {
    var scratch: TemporaryDirectory
    var log: URL
    var key: String
    var vkey: String
    var strangerVkey: String
    func path(_ name: String) -> String { scratch.child(name).path }
  }

  /// A scratch directory with the key files and `log`: a copy of the fixture (with `entries == nil`)
  /// or a log of `entries` entries (app `ledger`, snapshots at 10 and 35), given its Merkle tree by a
  /// first writer and the fixed log id.
  static func setup(entries: Int? = nil) throws -> Setup {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    let log = scratch.child("log")
    if let entries {
      let actionLog = try ActionLog(directory: log, options: .init(flushInterval: nil, appID: "ledger"))
      try actionLog.append(
        contentsOf: try (1...entries).map {
          try NewEntry(
            encoding: "payload-\($0)", typeName: "text", metadata: ["n": "\($0)"], codec: $0 % 2 == 0 ? .json : .cbor)
        })
      for seq in [10, 35] where seq <= entries {
        try actionLog.writeSnapshot(at: UInt64(seq), state: Array("state".utf8), codec: .json, schemaVersion: 1)
      }
      try actionLog.close()
    } else {
      try Repository.copyFixture(to: log)
      try ActionLog(directory: log).close()
    }
    try edit(log) { txn, dbs in try txn.put(logID, forKey: Array(TreeStorage.logIDKey.utf8), in: dbs["meta"]!) }
    let setup = Setup(
      scratch: scratch, log: log, key: scratch.child("log.key").path, vkey: scratch.child("log.vkey").path,
      strangerVkey: scratch.child("stranger.vkey").path)
    try Data((signer.privateKeyText + "\n").utf8).write(to: URL(fileURLWithPath: setup.key))
    try Data((signer.verifier.text + "\n").utf8).write(to: URL(fileURLWithPath: setup.vkey))
    try Data((stranger.verifier.text + "\n").utf8).write(to: URL(fileURLWithPath: setup.strangerVkey))
    return setup
  }

  /// Runs `body` in a write transaction on the log's raw LMDB environment (no `ActionLog` open).
  static func edit(_ log: URL, _ body: (Transaction, [String: Database]) throws -> Void) throws {
    let environment = try Environment(path: log.path, configuration: .init(maxDatabases: 8))
    defer { environment.close() }
    var dbs: [String: Database] = [:]
    for name in ["entries", "snapshots", "meta", "tree", "checkpoints"] {
      dbs[name] = try? environment.openDatabase(named: name)
    }
    try environment.write { try body($0, dbs) }
  }

  /// Every key and value of every database of the log: what "the log is unchanged" compares.
  static func dump(_ log: URL) throws -> [String: [[UInt8]: [UInt8]]] {
    var all: [String: [[UInt8]: [UInt8]]] = [:]
    try edit(log) { txn, dbs in
      for (name, db) in dbs {
        all[name] = try txn.withCursor(on: db) { cursor in
          var pairs: [[UInt8]: [UInt8]] = [:]
          var item = try cursor.first()
          while let (key, value) = item {
            pairs[Array(key)] = Array(value)
            item = try cursor.next()
          }
          return pairs
        }
      }
    }
    return all
  }

  static func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

  // MARK: - Golden outputs

  @Test func goldenOutputsOfEveryCommand() throws {
    let setup = try Self.setup()
    defer { setup.scratch.remove() }
    let log = setup.log.path
    let checkpoint = setup.path("cp-300.note")
    let cases: [(name: String, arguments: [String])] = [
      ("checkpoint", ["checkpoint", log, "--key", setup.key, "--out", checkpoint]),
      ("checkpoint-json", ["checkpoint", log, "--key", setup.key, "--json"]),
      ("prove", ["prove", log, "57", "--checkpoint", checkpoint, "--out", setup.path("proof-57.json")]),
      ("prove-json", ["prove", log, "117", "--size", "200", "--json"]),
      ("prove-default", ["prove", log, "300"]),
      ("consistency", ["consistency", log, "100", checkpoint, "--key", setup.vkey]),
      ("consistency-json", ["consistency", log, "13", "200", "--json"]),
      ("verify-checkpoint", ["verify", log, "--checkpoint", checkpoint, "--key", setup.vkey]),
      ("verify-checkpoint-json", ["verify", log, "--checkpoint", checkpoint, "--key", setup.vkey, "--json"]),
      ("audit", ["audit", setup.path("proof-57.json"), "--checkpoint", checkpoint, "--key", setup.vkey]),
      (
        "audit-json", ["audit", setup.path("proof-57.json"), "--checkpoint", checkpoint, "--key", setup.vkey, "--json"]
      ),
    ]
    for (name, arguments) in cases {
      let result = try Tool.run(arguments)
      #expect(result.status == 0, "\(name): \(result.stderr)")
      #expect(result.stderr.isEmpty, "\(name)")
      try expectGolden(name, result.stdout, scratch: setup.scratch)
    }
    // The checkpoint file is the signed note the log stored, and the proof document what --json prints.
    let actionLog = try ActionLog(directory: setup.log, access: .readOnly)
    defer { try? actionLog.close() }
    let stored = try actionLog.checkpoints()
    #expect(stored.count == 1)
    #expect(try Array(Data(contentsOf: URL(fileURLWithPath: checkpoint))) == stored.first?.formatted)
    #expect(try actionLog.verify(checkpoint: stored[0], verifier: Self.signer.verifier).isValid)
    let printed = try Tool.run(["prove", log, "57", "--checkpoint", checkpoint, "--json"]).stdout
    #expect(try String(contentsOfFile: setup.path("proof-57.json"), encoding: .utf8) == printed)
  }

  @Test func keygenWritesAPrivateKeyOnlyItsOwnerReadsAndNeverReplacesOne() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let prefix = scratch.child("ledger").path
    let result = try Tool.run(["keygen", "ledger.example/log", "--out", prefix])
    #expect(result.status == 0, "\(result.stderr)")
    let keyID = #/\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}/#
    let normalized = result.stdout.replacing(keyID, with: "+<id>+<key>").replacing(
      #/key id +[0-9a-f]{8}/#, with: "key id        <id>")
    try expectGolden("keygen", normalized, scratch: scratch)

    let privateText = try String(contentsOfFile: prefix + ".key", encoding: .utf8)
    let verifierText = try String(contentsOfFile: prefix + ".vkey", encoding: .utf8)
    let signer = try NoteSigner(parsing: privateText)
    #expect(signer.verifier.text + "\n" == verifierText)
    #expect(signer.name == "ledger.example/log")
    #expect(!result.stdout.contains(privateText.dropLast()), "the private key is never printed")
    var info = stat()
    #expect(stat(prefix + ".key", &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)

    // Again: refused, exit 2, both files as they were.
    let again = try Tool.run(["keygen", "ledger.example/log", "--out", prefix, "--json"])
    #expect(again.status == 2)
    #expect(
      again.errorLines.count == 1 && again.stderr.contains(prefix + ".key") && again.stderr.contains("already exists"))
    #expect(try String(contentsOfFile: prefix + ".key", encoding: .utf8) == privateText)
    #expect(try String(contentsOfFile: prefix + ".vkey", encoding: .utf8) == verifierText)

    // A witness key, and --json.
    let witness = try Tool.run(["keygen", "witness.example", "--out", scratch.child("w").path, "--witness", "--json"])
    #expect(witness.status == 0, "\(witness.stderr)")
    let object = try JSONSerialization.jsonObject(with: Data(witness.stdout.utf8)) as? [String: Any]
    #expect(object?["type"] as? String == "cosignature")
    let witnessKey = try NoteSigner(parsing: try String(contentsOfFile: scratch.child("w.key").path, encoding: .utf8))
    #expect(witnessKey.verifier.type == .cosignatureV1)
    #expect(object?["verifierKey"] as? String == witnessKey.verifier.text)
  }

  // MARK: - Tampering that verify --checkpoint names

  /// A 40-entry log, its checkpoint signed by `logtool checkpoint`, then `tamper`ed; returns what
  /// `verify --checkpoint` says.
  private func verifyAfter(_ tamper: (Transaction, [String: Database]) throws -> Void) throws -> ChildResult {
    let setup = try Self.setup(entries: 40)
    defer { setup.scratch.remove() }
    let checkpoint = setup.path("cp.note")
    let signed = try Tool.run(["checkpoint", setup.log.path, "--key", setup.key, "--out", checkpoint])
    #expect(signed.status == 0, "\(signed.stderr)")
    let clean = try Tool.run(["verify", setup.log.path, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(clean.status == 0, "before tampering: \(clean.stdout) \(clean.stderr)")
    try Self.edit(setup.log, tamper)
    return try Tool.run(["verify", setup.log.path, "--checkpoint", checkpoint, "--key", setup.vkey])
  }

  /// Rewrites entries `first…40` with recomputed chain hashes (changing entry `change` first), after
  /// removing the entries through `anchor` and setting the anchor when one is given.
  private func rewrite(
    _ txn: Transaction, _ dbs: [String: Database], from first: UInt64, anchor: ChainAnchor?, change: UInt64?
  )
    throws
  {
    let entries = dbs["entries"]!
    var previous: [UInt8]
    if let anchor {
      previous = anchor.hash
    } else {
      previous = Array(try txn.get(forKey: Self.key(first - 1), in: entries)!.suffix(32))
    }
    if let anchor {
      for seq in 1...anchor.seq { _ = try txn.delete(forKey: Self.key(seq), in: entries) }
      _ = try txn.delete(forKey: Self.key(10), in: dbs["snapshots"]!)
      try txn.put(Self.key(anchor.seq) + anchor.hash, forKey: Array("anchor".utf8), in: dbs["meta"]!)
    }
    for seq in first...40 {
      var value = try txn.get(forKey: Self.key(seq), in: entries)!
      if seq == change { value[value.count - 33] ^= 0x01 }
      let body = Array(value.dropLast(32))
      let hash = body.withUnsafeBytes { Chain.hash(previous: previous, seq: seq, body: $0) }
      try txn.put(body + hash, forKey: Self.key(seq), in: entries)
      previous = hash
    }
  }

  private func expectNamed(
    _ result: ChildResult, _ name: String, _ text: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(result.status == 1, "exit \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stdout.contains("\(name): \(text)"), "\(result.stdout)", sourceLocation: sourceLocation)
    #expect(result.errorLines.count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
    #expect(
      result.stderr.contains("does not hold the checkpoint") || result.stderr.contains("does not verify"),
      "\(result.stderr)", sourceLocation: sourceLocation)
  }

  @Test func newestEntriesRemovedWithTheirSnapshotsAreNamed() throws {
    let result = try verifyAfter { txn, dbs in
      for seq in UInt64(31)...40 { _ = try txn.delete(forKey: Self.key(seq), in: dbs["entries"]!) }
      _ = try txn.delete(forKey: Self.key(35), in: dbs["snapshots"]!)
    }
    expectNamed(
      result, "entriesRemovedFromEnd",
      "entries removed from the end: the log ends at entry 30 but the checkpoint covers 40")
  }

  @Test func aChainRewrittenWithRecomputedHashesIsNamed() throws {
    let result = try verifyAfter { txn, dbs in try rewrite(txn, dbs, from: 25, anchor: nil, change: 25) }
    expectNamed(
      result, "chainRewritten",
      "chain rewritten: the entries differ from those the checkpoint's root commits to, first among entries 17…32")
  }

  @Test func oldestEntriesRemovedWithAForgedAnchorAreNamed() throws {
    let result = try verifyAfter { txn, dbs in
      try rewrite(
        txn, dbs, from: 17, anchor: ChainAnchor(seq: 16, hash: Array(repeating: 0xAB, count: 32)), change: nil)
    }
    expectNamed(result, "anchorForged", "oldest entries removed with a forged anchor: entry 17 does not match")
    #expect(!result.stdout.contains("chainBroken"), "the rewritten chain itself holds: \(result.stdout)")
  }

  @Test func relabelledMetaIsNamed() throws {
    let result = try verifyAfter { txn, dbs in
      try txn.put(Array("other-app".utf8), forKey: Array("app".utf8), in: dbs["meta"]!)
    }
    expectNamed(
      result, "originMismatch",
      "meta relabelled: the checkpoint is of 'chronicle/ledger/000102030405060708090a0b0c0d0e0f' but the log is 'chronicle/other-app/"
    )
  }

  @Test func aChangedCheckpointFileIsABadSignatureAndSeveralCheckpointsAreChecked() throws {
    let setup = try Self.setup(entries: 40)
    defer { setup.scratch.remove() }
    let checkpoint = setup.path("cp.note")
    #expect(try Tool.run(["checkpoint", setup.log.path, "--key", setup.key, "--out", checkpoint]).status == 0)
    // The size changed from 40 to 30 with the signature kept: a smaller tree the log holds, badly signed.
    let text = try String(contentsOfFile: checkpoint, encoding: .utf8)
    let forged = setup.path("forged.note")
    try Data(text.replacingOccurrences(of: "\n40\n", with: "\n30\n").utf8).write(to: URL(fileURLWithPath: forged))
    let result = try Tool.run([
      "verify", setup.log.path, "--checkpoint", checkpoint, "--checkpoint", forged, "--key", setup.vkey, "--json",
    ])
    #expect(result.status == 1)
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    let checkpoints = object?["checkpoints"] as? [[String: Any]] ?? []
    #expect(checkpoints.map { $0["valid"] as? Bool } == [true, false])
    let names = (checkpoints.last?["problems"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
    #expect(names?.first == "badSignature", "\(result.stdout)")
    #expect(object?["valid"] as? Bool == false)
  }

  // MARK: - Audit of tampered material

  /// A signed fixture with a proof document of entry 57; returns the setup and the paths.
  private func auditSetup() throws -> (Setup, checkpoint: String, proof: String) {
    let setup = try Self.setup()
    let checkpoint = setup.path("cp.note")
    let proof = setup.path("proof.json")
    #expect(try Tool.run(["checkpoint", setup.log.path, "--key", setup.key, "--out", checkpoint]).status == 0)
    #expect(try Tool.run(["prove", setup.log.path, "57", "--out", proof]).status == 0)
    return (setup, checkpoint, proof)
  }

  /// The proof document at `path` with `change` applied to its JSON object, written to `to`.
  private func alter(_ path: String, to: String, _ change: (inout [String: Any]) -> Void) throws {
    var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
    change(&object)
    try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: to))
  }

  @Test func auditNamesATamperedEntryProofOrCheckpoint() throws {
    let (setup, checkpoint, proof) = try auditSetup()
    defer { setup.scratch.remove() }
    let good = try Tool.run(["audit", proof, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
    #expect(good.stdout.contains("result      OK: entry 57 is in the log the checkpoint signs"))

    // The entry: one payload byte changed, audited against the untouched proof.
    let entry = setup.path("entry.json")
    try alter(proof, to: entry) { object in
      var value = [UInt8](Data(base64Encoded: object["value"] as! String)!)
      value[value.count - 34] ^= 0x01
      object["value"] = Data(value).base64EncodedString()
    }
    let changedEntry = try Tool.run(["audit", entry, "--proof", proof, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(changedEntry.status == 1)
    #expect(changedEntry.stdout.contains("entryChanged: entry 57 in \(entry) was changed"), "\(changedEntry.stdout)")
    #expect(changedEntry.errorLines.count == 1 && changedEntry.stderr.contains("entryChanged"))

    // The proof: one hash changed.
    let badProof = setup.path("bad-proof.json")
    try alter(proof, to: badProof) { object in
      var hashes = object["proof"] as! [String]
      hashes[2] = String(repeating: "0", count: 64)
      object["proof"] = hashes
    }
    let changedProof = try Tool.run(["audit", badProof, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(changedProof.status == 1)
    #expect(
      changedProof.stdout.contains("proofInvalid: the proof \(badProof) does not lead from entry 57"),
      "\(changedProof.stdout)")

    // The checkpoint: its root replaced by another, the signature kept.
    let note = try String(contentsOfFile: checkpoint, encoding: .utf8)
    var lines = note.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines[2] = Data(repeating: 0x11, count: 32).base64EncodedString()
    let forged = setup.path("forged.note")
    try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: forged))
    let changedCheckpoint = try Tool.run(["audit", proof, "--checkpoint", forged, "--key", setup.vkey, "--json"])
    #expect(changedCheckpoint.status == 1)
    let object = try JSONSerialization.jsonObject(with: Data(changedCheckpoint.stdout.utf8)) as? [String: Any]
    let names = (object?["problems"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
    #expect(names == ["badSignature"], "\(changedCheckpoint.stdout)")

    // A proof of another tree size than the checkpoint's.
    let other = setup.path("proof-200.json")
    #expect(try Tool.run(["prove", setup.log.path, "57", "--size", "200", "--out", other]).status == 0)
    let wrongTree = try Tool.run(["audit", other, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(wrongTree.status == 1)
    #expect(
      wrongTree.stdout.contains(
        "wrongTree: the proof \(other) is for a tree of 200 entries, but the checkpoint covers 300"))

    // The wrong key: refused, exit 2.
    let wrongKey = try Tool.run(["audit", proof, "--checkpoint", checkpoint, "--key", setup.strangerVkey])
    #expect(wrongKey.status == 2)
    #expect(
      wrongKey.errorLines.count == 1
        && wrongKey.stderr.contains("carries no signature by the key of \(setup.strangerVkey)"))
  }

  // MARK: - Bad input: exit 2, one line naming what was wrong, the log unchanged

  @Test func badInputIsRefusedAndLeavesTheLogUnchanged() throws {
    let setup = try Self.setup()
    defer { setup.scratch.remove() }
    let log = setup.log.path
    let checkpoint = setup.path("cp.note")
    #expect(try Tool.run(["checkpoint", log, "--key", setup.key, "--out", checkpoint]).status == 0)
    let notes = setup.path("notes.txt")
    try Data("hello\n".utf8).write(to: URL(fileURLWithPath: notes))
    let before = try Self.dump(setup.log)
    let missing = setup.path("missing.key")
    let cases: [(arguments: [String], names: String, reason: String)] = [
      (["checkpoint", log, "--key", missing], missing, "does not exist"),
      (["checkpoint", log, "--key", setup.vkey], setup.vkey, "is a verifier key, not a private key"),
      (["checkpoint", log, "--key", notes], notes, "is not a private key file"),
      (["checkpoint", log, "--key", setup.key, "--out", checkpoint], checkpoint, "already exists"),
      (["checkpoint", setup.path("nowhere"), "--key", setup.key], setup.path("nowhere"), "does not exist"),
      (["verify", log, "--checkpoint", checkpoint, "--key", missing], missing, "does not exist"),
      (["verify", log, "--checkpoint", checkpoint, "--key", setup.strangerVkey], setup.strangerVkey, "wrong key?"),
      (
        ["verify", log, "--checkpoint", checkpoint, "--key", setup.key], setup.key,
        "is a private key, not a verifier key"
      ),
      (["verify", log, "--checkpoint", notes, "--key", setup.vkey], notes, "is not a signed checkpoint"),
      (["verify", log, "--checkpoint", setup.vkey, "--key", setup.vkey], setup.vkey, "is not a signed checkpoint"),
      (["prove", log, "301"], log, "entry 301 is not in the tree of 300 entries"),
      (["prove", log, "0"], log, "entry 0 is not in the tree"),
      (["prove", log, "5", "--size", "999"], log, "has a tree of 300 entries"),
      (["prove", log, "5", "--checkpoint", notes], notes, "is not a signed checkpoint"),
      (["consistency", log, "200", "100"], "OLD (size 200)", "is larger than NEW (size 100)"),
      (["consistency", log, checkpoint, "100"], checkpoint, "is larger than NEW (size 100)"),
      (["consistency", log, "10", "999"], log, "has a tree of 300 entries, not 999"),
      (["consistency", log, "10", notes], notes, "is not a signed checkpoint"),
      (["consistency", log, "10", checkpoint, "--key", setup.strangerVkey], setup.strangerVkey, "wrong key?"),
      (["audit", notes, "--checkpoint", checkpoint, "--key", setup.vkey], notes, "is not a proof document"),
      (["audit", notes, "--checkpoint", notes, "--key", setup.vkey], notes, "is not a signed checkpoint"),
      (["keygen", "two words", "--out", setup.path("k")], "two words", "contains a space"),
      (["keygen", "x", "--out", setup.path("no/such/dir/k")], setup.path("no/such/dir/k.key"), "cannot create"),
    ]
    for (arguments, names, reason) in cases {
      let result = try Tool.run(arguments)
      let command = arguments.joined(separator: " ")
      #expect(result.status == 2, "\(command): exit \(result.status) \(result.stderr)")
      #expect(result.errorLines.count == 1, "\(command): \(result.stderr)")
      #expect(result.stderr.contains(names), "\(command) names \(names): \(result.stderr)")
      #expect(result.stderr.contains(reason), "\(command) says '\(reason)': \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(command): \(result.stdout)")
    }
    #expect(try Self.dump(setup.log) == before, "no refused command changed the log")
    #expect(!FileManager.default.fileExists(atPath: setup.path("nowhere")), "checkpoint created no log")
    #expect(!FileManager.default.fileExists(atPath: setup.path("k.key")), "keygen wrote no key for a bad name")
  }

  @Test func aLogWithoutATreeIsBadInputForProofsAndFailsACheckpoint() throws {
    // The committed format-1 fixture, never opened by a writer of this version: no tree, no log id.
    let setup = try Self.setup()
    defer { setup.scratch.remove() }
    let checkpoint = setup.path("cp.note")
    #expect(try Tool.run(["checkpoint", setup.log.path, "--key", setup.key, "--out", checkpoint]).status == 0)
    let old = setup.scratch.child("old")
    try Repository.copyFixture(to: old)
    let before = try Self.dump(old)
    for arguments in [["prove", old.path, "5"], ["consistency", old.path, "1", "2"]] {
      let result = try Tool.run(arguments)
      #expect(result.status == 2, "\(arguments): exit \(result.status) \(result.stderr)")
      #expect(
        result.errorLines.count == 1 && result.stderr.contains("\(old.path) has no Merkle tree"), "\(result.stderr)")
    }
    let verified = try Tool.run(["verify", old.path, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(verified.status == 1)
    #expect(verified.stdout.contains("originMismatch: meta relabelled"), "\(verified.stdout)")
    #expect(try Self.dump(old) == before, "a reader built no tree")
  }

  @Test func aCompactedLogStillHoldsItsCheckpointAndProvesItsRemainingEntries() throws {
    let setup = try Self.setup()
    defer { setup.scratch.remove() }
    let log = setup.log.path
    let checkpoint = setup.path("cp.note")
    #expect(try Tool.run(["checkpoint", log, "--key", setup.key, "--out", checkpoint]).status == 0)
    let compacted = try Tool.run(["compact", log, "--before", "250", "--discard"])
    #expect(compacted.status == 0, "\(compacted.stderr)")

    let verified = try Tool.run(["verify", log, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    #expect(
      verified.stdout.contains("entries 1…200 compacted away: their stored tree hashes match"), "\(verified.stdout)")

    let proof = setup.path("proof-250.json")
    #expect(try Tool.run(["prove", log, "250", "--checkpoint", checkpoint, "--out", proof]).status == 0)
    let audited = try Tool.run(["audit", proof, "--checkpoint", checkpoint, "--key", setup.vkey])
    #expect(audited.status == 0, "\(audited.stdout)\(audited.stderr)")
    #expect(try Tool.run(["consistency", log, "200", checkpoint, "--key", setup.vkey]).status == 0)
    // Below the anchor the tree hashes went with the entries (only the anchor's frontier stays).
    let before = try Tool.run(["consistency", log, "150", checkpoint])
    #expect(before.status == 2)
    #expect(
      before.errorLines.count == 1 && before.stderr.contains("was compacted through entry 200"), "\(before.stderr)")

    let gone = try Tool.run(["prove", log, "150"])
    #expect(gone.status == 2)
    #expect(
      gone.errorLines.count == 1 && gone.stderr.contains("has no entry 150: compaction removed it"), "\(gone.stderr)")
  }

  @Test func salvagePrintsTheCheckpointsItKeptAndDropped() throws {
    let setup = try Self.setup(entries: 20)
    defer { setup.scratch.remove() }
    let log = try ActionLog(directory: setup.log)
    _ = try log.signCheckpoint(with: Self.signer)
    for more in 0..<2 {
      try log.append(contentsOf: try (1...20).map { try NewEntry(encoding: "more-\(more)-\($0)", typeName: "text", codec: .cbor) })
      _ = try log.signCheckpoint(with: Self.signer)
    }
    try log.close()
    // Entry 45's body changed: the chain breaks there, and the checkpoint of 60 entries goes.
    try Self.edit(setup.log) { txn, dbs in
      var value = try #require(try txn.get(forKey: Self.key(45), in: dbs["entries"]!))
      value[value.count - 40] ^= 1
      try txn.put(value, forKey: Self.key(45), in: dbs["entries"]!)
    }
    let text = try Tool.run(["salvage", setup.log.path, setup.path("salvaged")])
    #expect(text.status == 1, "\(text.stdout)\(text.stderr)")
    #expect(text.stdout.contains("2 kept, 1 dropped"), "\(text.stdout)")
    #expect(text.stdout.contains("checkpoint of size 60: it covers 60 entries, more than the 44 that survived"), "\(text.stdout)")
    #expect(text.errorLines.count == 1 && text.stderr.contains("the checkpoints of sizes 60"), "\(text.stderr)")

    let json = try Tool.run(["salvage", setup.log.path, setup.path("salvaged-json"), "--json"])
    #expect(json.status == 1)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(object["checkpointsKept"] as? [Int] == [20, 40])
    let dropped = try #require(object["checkpointsDropped"] as? [[String: Any]])
    #expect(dropped.count == 1 && dropped.first?["size"] as? Int == 60, "\(dropped)")
    let copy = try ActionLog(directory: setup.scratch.child("salvaged"), access: .readOnly)
    defer { try? copy.close() }
    #expect(try copy.checkpoints().count == 2)
  }

  @Test func checkpointWhileAWriterHoldsTheLogIsRefused() throws {
    let setup = try Self.setup(entries: 20)
    defer { setup.scratch.remove() }
    let before = try Self.dump(setup.log)
    let writer = try ActionLog(directory: setup.log)
    let result = try Tool.run(["checkpoint", setup.log.path, "--key", setup.key, "--out", setup.path("cp.note")])
    try writer.close()
    #expect(result.status == 2)
    #expect(result.errorLines.count == 1 && result.stderr.contains(setup.log.path) && result.stderr.contains("locked"))
    #expect(try Self.dump(setup.log) == before)
    #expect(!FileManager.default.fileExists(atPath: setup.path("cp.note")))
  }
}
