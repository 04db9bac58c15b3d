import ChronicleLog
import Foundation
import LogToolKit
import TestSupport
import Testing

/// `logtool` on an encrypted log: entries show as encrypted without `--key-file` and in full with it;
/// `verify` needs no key; `rekey` rewrites the log; `export` refuses clearly.
@Suite struct EncryptedToolTests {
  private func run(_ arguments: [String]) -> ChildResult { ExtremeValueToolTests.run(arguments) }

  @Test func listShowVerifyRekeyAndExportOfAnEncryptedLog() throws {
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

    let listed = run(["list", path])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(listed.stdout.contains("encrypted (key \(keyID))"))
    #expect(!listed.stdout.contains("zoe"))
    let listedWithKey = run(["list", path, "--key-file", keys.path])
    #expect(listedWithKey.stdout.contains("user=zoe") || listedWithKey.stdout.contains("zoe"))
    #expect(!listedWithKey.stdout.contains("encrypted"))

    let shown = run(["show", path, "2"])
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdout.contains("encrypted with key \(keyID)"))
    #expect(!shown.stdout.contains("200"))
    let shownWithKey = run(["show", path, "2", "--key-file", keys.path, "--json"])
    #expect(shownWithKey.stdout.contains("\"amount\":200"))
    let shownJSON = run(["show", path, "2", "--json"])
    #expect(shownJSON.stdout.contains("\"encrypted\":true"))

    #expect(run(["verify", path]).status == 0)
    let export = run(["export", path, "--output", scratch.url.appendingPathComponent("out.jsonl").path])
    #expect(export.status == 2)
    #expect(export.stderr.contains("is encrypted"))

    let newKeys = scratch.url.appendingPathComponent("new.keys")
    let newRing = try KeyRing([.random()])
    try newRing.fileText.write(to: newKeys, atomically: true, encoding: .utf8)
    let rekeyed = run(["rekey", path, "--key-file", keys.path, "--new-key-file", newKeys.path])
    #expect(rekeyed.status == 0, "\(rekeyed.stderr)")
    #expect(rekeyed.stdout.contains("sealed with key \(newRing.current.idText)"))
    #expect(run(["show", path, "3", "--key-file", newKeys.path]).stdout.contains("300"))
    let stale = run(["show", path, "3", "--key-file", keys.path])
    #expect(stale.stdout.contains("encrypted with key \(newRing.current.idText)"))
    let badFile = run(["list", path, "--key-file", scratch.url.appendingPathComponent("missing.keys").path])
    #expect(badFile.status == 2)
    #expect(badFile.stderr.contains("missing.keys"))
  }
}
