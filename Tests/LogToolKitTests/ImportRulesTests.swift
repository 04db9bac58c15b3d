import Foundation
import ChronicleLMDB
import LogToolKit
import ChronicleTestTools
import Testing

@testable import ChronicleLog

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// `import` and `verify` check what the engine checks before it opens a log, and an export that
/// never ends is refused instead of read forever.
@Suite(.serialized) struct ImportRulesTests {
  /// A log of two actions followed by an undo entry naming `target`, written past the checks of
  /// `append` (the bytes and the chain are otherwise right), as a forger or a bug would.
  static func makeLog(at url: URL, undoTarget target: String) throws {
    let log = try ActionLog(directory: url, options: .init(durability: .normal, flushInterval: nil, appID: "rules"))
    try log.append(NewEntry(typeName: "one", codec: .json, payload: Array("1".utf8), timestamp: 5))
    try log.append(NewEntry(typeName: "two", codec: .json, payload: Array("2".utf8), timestamp: 6))
    let previous = try log.head().hash
    try log.close()
    let undo = NewEntry(
      kind: .undo, typeName: "undo", codec: .json, payload: Array(#"{"target":\#(target)}"#.utf8), timestamp: 7)
    var writer = ByteWriter(capacity: 256)
    try EntryFormat.encodeBody(undo, timestamp: 7, into: &writer)
    let hash = writer.bytes.withUnsafeBytes { Chain.hash(previous: previous, seq: 3, body: $0) }
    try withRawEnvironment(url) { environment, entries, _ in
      try environment.write { txn in
        try txn.put(writer.bytes + hash, forKey: withUnsafeBytes(of: UInt64(3).bigEndian) { Array($0) }, in: entries)
      }
    }
  }

  @Test(arguments: ["3", "4", "18446744073709551615", "-1"])
  func aJumpTheEngineRefusesFailsVerifyAndImport(_ target: String) async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Self.makeLog(at: log, undoTarget: target)

    let verify = await ExtremeValueToolTests.run(["verify", log.path])
    #expect(verify.status == 1, "verify: \(verify.status) \(verify.stdout)")
    let named = verify.stdout.contains("its undo jumps to entry \(target), which is not before it")
      || verify.stdout.contains("its undo payload is not a {\"target\": seq}")
    #expect(named, "\(verify.stdout)")

    let export = scratch.child("export.jsonl")
    #expect(await ExtremeValueToolTests.run(["export", log.path, "-o", export.path]).status == 0)
    let destination = scratch.child("imported")
    let imported = await ExtremeValueToolTests.run(["import", export.path, "--into", destination.path])
    #expect(imported.status == 2, "import: \(imported.status) \(imported.stderr)")
    #expect(imported.stderr.contains("(entry 3)"), "\(imported.stderr)")
    #expect(!FileManager.default.fileExists(atPath: destination.path))
  }

  @Test func aGoodJumpStillImports() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Self.makeLog(at: log, undoTarget: "1")
    #expect(await ExtremeValueToolTests.run(["verify", log.path]).status == 0)
    let export = scratch.child("export.jsonl")
    #expect(await ExtremeValueToolTests.run(["export", log.path, "-o", export.path]).status == 0)
    let imported = await ExtremeValueToolTests.run(["import", export.path, "--into", scratch.child("imported").path])
    #expect(imported.status == 0, "\(imported.stderr)")
  }

  /// 50,000 undo entries, each undoing the one before: `list` follows the chain once (it used to
  /// follow it again for every entry), and its JSON keeps the first entries of each chain.
  @Test func aLongChainOfJumpsListsQuickly() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let url = scratch.child("log")
    let log = try ActionLog(directory: url, options: .init(durability: .normal, flushInterval: nil, appID: "rules"))
    try log.append(NewEntry(typeName: "one", codec: .json, payload: Array("1".utf8)))
    let count = 50_000
    _ = try log.append(
      contentsOf: (2...UInt64(count + 1)).map {
        NewEntry(kind: .undo, typeName: "undo", codec: .json, payload: Array(#"{"target":\#($0 - 1)}"#.utf8))
      })
    try log.close()
    for arguments in [["list", url.path, "--json"], ["list", url.path, "--reverse"]] {
      let started = Date()
      let result = await ExtremeValueToolTests.run(arguments)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(Date().timeIntervalSince(started) < 30, "logtool \(arguments.joined(separator: " "))")
      if arguments.contains("--json") {
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
        let last = (rows.last?["jump"] as? [String: Any]) ?? [:]
        #expect(last["state"] as? Int == 1)
        #expect((last["chain"] as? [Int])?.count == JumpResolver.chainLimit)
      }
    }
  }

  /// `import /dev/zero`: one line that never ends is refused at the line limit, not read forever.
  @Test func anEndlessLineIsRefused() throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let started = Date()
    let result = try Tool.run(["import", "/dev/zero", "--into", scratch.child("imported").path], timeout: 120)
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("a line longer than"), "\(result.stderr)")
    #expect(result.errorLines.count == 1)
    #expect(Date().timeIntervalSince(started) < 60)
  }

  /// An import onto a full file system (a 2 MiB tmpfs) ends with one sentence naming the full
  /// disk and the destination, and leaves nothing behind.
  @Test(.enabled(if: geteuid() == 0, "needs root to mount a small file system"))
  func anImportOntoAFullFileSystemSaysSo() async throws {
    let scratch = try TemporaryDirectory()
    defer { scratch.remove() }
    let small = scratch.child("small")
    try FileManager.default.createDirectory(at: small, withIntermediateDirectories: false)
    let mounted = try ChildProcess.run(
      executable: URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=2m", "tmpfs", small.path])
    try #require(mounted.status == 0, "cannot mount a tmpfs here: \(mounted.stderr)")
    defer { _ = try? ChildProcess.run(executable: URL(fileURLWithPath: "/bin/umount"), [small.path]) }
    let log = scratch.child("log")
    try LogToolKitTests.makeLog(at: log, count: 20_000, snapshotEvery: 1_000_000)
    let export = scratch.child("export.jsonl")
    #expect(await ExtremeValueToolTests.run(["export", log.path, "-o", export.path]).status == 0)

    let destination = small.appendingPathComponent("imported")
    let result = await ExtremeValueToolTests.run(["import", export.path, "--into", destination.path])
    #expect(result.status == 2, "\(result.stderr)")
    #expect(result.stderr.contains("no space left for \(destination.path)"), "\(result.stderr)")
    #expect(result.errorLines.count == 1)
    #expect(try FileManager.default.contentsOfDirectory(atPath: small.path).isEmpty)
  }
}
