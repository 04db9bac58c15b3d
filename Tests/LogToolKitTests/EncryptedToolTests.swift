import ChronicleLog
import Foundation
import LogToolKit
import ChronicleTestTools
import Testing

/// `logtool` on an encrypted log: entries show as encrypted without `--key-file` and in full with it;
/// `verify` needs no key; `rekey` rewrites the log; `export`, `import`, `compact` and `salvage` carry
/// the records as stored.
@Suite struct EncryptedToolTests {
  private func run(_ arguments: [String]) async -> ChildResult { await ExtremeValueToolTests.run(arguments) }

  @Test func listShowVerifyRekeyAndExportOfAnEncryptedLog() async throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let ring = try KeyRing([.random()])
    let keys = scratch.url.appendingPathComponent("log.keys")
    try ring.fileText.write(to: keys, atomically: true, encoding: .utf8)
    let log = try ActionLog(directory: dir.url, options: .init(durability: .full, appID: "tool", keyRing: ring))
    try log.append(contentsOf: (1...3).map {
      try NewEntry(encoding: ["amount": $0 * 100], typeName: "deposit", metadata: ["user": "zoe"], codec: .json)
    })
    try log.close()
    let path = dir.url.path
    let keyID = ring.current.idText

    let listed = await run(["list", path])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(listed.stdout.contains("encrypted (key \(keyID))"))
    #expect(!listed.stdout.contains("zoe"))
    let listedWithKey = await run(["list", path, "--key-file", keys.path])
    #expect(listedWithKey.stdout.contains("user=zoe") || listedWithKey.stdout.contains("zoe"))
    #expect(!listedWithKey.stdout.contains("encrypted"))

    let shown = await run(["show", path, "2"])
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdout.contains("encrypted with key \(keyID)"))
    // The payload stays hidden (its digits could appear by chance in the random hash: look for its key).
    #expect(!shown.stdout.contains("amount"))
    let shownWithKey = await run(["show", path, "2", "--key-file", keys.path, "--json"])
    #expect(shownWithKey.stdout.contains("\"amount\":200"))
    let shownJSON = await run(["show", path, "2", "--json"])
    #expect(shownJSON.stdout.contains("\"encrypted\":true"))

    #expect(await run(["verify", path]).status == 0)

    let newKeys = scratch.url.appendingPathComponent("new.keys")
    let newRing = try KeyRing([.random()])
    try newRing.fileText.write(to: newKeys, atomically: true, encoding: .utf8)
    let rekeyed = await run(["rekey", path, "--key-file", keys.path, "--new-key-file", newKeys.path])
    #expect(rekeyed.status == 0, "\(rekeyed.stderr)")
    #expect(rekeyed.stdout.contains("sealed with key \(newRing.current.idText)"))
    #expect(await run(["show", path, "3", "--key-file", newKeys.path]).stdout.contains("300"))
    let stale = await run(["show", path, "3", "--key-file", keys.path])
    // A key file without the entry's key is an error, not an entry shown as encrypted.
    #expect(stale.status == 1)
    #expect(stale.stderr.contains("is sealed with key \(newRing.current.idText), which \(keys.path) does not hold"))
    let badFile = await run(["list", path, "--key-file", scratch.url.appendingPathComponent("missing.keys").path])
    #expect(badFile.status == 2)
    #expect(badFile.stderr.contains("missing.keys"))
  }

  @Test func exportImportCompactAndSalvageOfAnEncryptedLog() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let ring = try KeyRing([.random()])
    let keys = scratch.child("log.keys")
    try ring.fileText.write(to: keys, atomically: true, encoding: .utf8)
    let wrongKeys = scratch.child("wrong.keys")
    let wrong = try KeyRing([.random()])
    try wrong.fileText.write(to: wrongKeys, atomically: true, encoding: .utf8)
    let original = scratch.child("log")
    let log = try ActionLog(directory: original, options: .init(durability: .full, appID: "tool", keyRing: ring))
    for n in 1...40 {
      try log.append(
        try NewEntry(encoding: ["amount": n * 100], typeName: "deposit", metadata: ["user": "zoe.auditor"], codec: .json))
      if n % 10 == 0 { try log.writeSnapshot(at: UInt64(n), state: Array("{\"n\":\(n)}".utf8), codec: .json, schemaVersion: 1) }
    }
    try log.close()
    let keyID = ring.current.idText

    // export needs no key; the file holds no plaintext; import rebuilds the log byte for byte. The
    // plaintext looked for has a '.', which base64 never writes: the sealed records' base64 holds
    // any three letters by chance (a few KB of it held "zoe" in about one run in forty).
    let export = scratch.child("log.jsonl")
    let exported = await run(["export", original.path, "--output", export.path])
    #expect(exported.status == 0, "\(exported.stderr)")
    #expect(try Data(contentsOf: export).range(of: Data("zoe.auditor".utf8)) == nil)
    let imported = scratch.child("imported")
    let importRun = await run(["import", export.path, "--into", imported.path])
    #expect(importRun.status == 0, "\(importRun.stderr)")
    #expect(try RawDump(imported) == RawDump(original))
    #expect(await run(["verify", imported.path]).status == 0)
    #expect(await run(["show", imported.path, "7"]).stdout.contains("encrypted with key \(keyID)"))
    #expect(await run(["show", imported.path, "7", "--key-file", keys.path, "--json"]).stdout.contains("\"amount\":700"))
    let wrongShow = await run(["show", imported.path, "7", "--key-file", wrongKeys.path])
    #expect(wrongShow.status == 1, "a key file without its key is an error")
    #expect(wrongShow.stderr.contains("is sealed with key \(keyID)"), "\(wrongShow.stderr)")

    // compact: without the key one line and exit 2, nothing changed; with it, the cut.
    let before = try RawDump(original)
    let refused = await run(["compact", original.path, "--before", "35", "--discard"])
    #expect(refused.status == 2)
    #expect(refused.stderr.contains("compaction needs its key ring"))
    #expect(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1)
    let wrongRing = await run(["compact", original.path, "--before", "35", "--discard", "--key-file", wrongKeys.path])
    #expect(wrongRing.status == 2)
    #expect(wrongRing.stderr.contains("snapshot at 30") && wrongRing.stderr.contains(keyID))
    #expect(try RawDump(original) == before)
    let archive = scratch.child("archive.jsonl")
    let compacted = await run(["compact", original.path, "--before", "35", "--archive", archive.path, "--key-file", keys.path])
    #expect(compacted.status == 0, "\(compacted.stderr)")
    #expect(await run(["verify", original.path]).status == 0)
    #expect(await run(["show", original.path, "31", "--key-file", keys.path, "--json"]).stdout.contains("\"amount\":3100"))
    let restored = scratch.child("restored")
    #expect(await run(["import", archive.path, "--into", restored.path]).status == 0)
    #expect(await run(["verify", restored.path]).status == 0)

    // salvage needs no key and copies the records as stored.
    let salvaged = scratch.child("salvaged")
    let salvage = await run(["salvage", imported.path, salvaged.path])
    #expect(salvage.status == 0, "\(salvage.stderr)")
    #expect(try RawDump(salvaged) == RawDump(imported))
    #expect(await run(["show", salvaged.path, "40", "--key-file", keys.path, "--json"]).stdout.contains("\"amount\":4000"))
  }
}
