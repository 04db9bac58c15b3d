import Foundation
import ChronicleTestTools
import Testing

@testable import ChronicleLog

// MARK: - Helpers

private func keyFile(_ ring: KeyRing, in dir: TemporaryDirectory, _ name: String) throws -> URL {
  let url = dir.url.appendingPathComponent(name)
  try ring.fileText.write(to: url, atomically: true, encoding: .utf8)
  return url
}

private func readOnly(_ dir: URL, _ ring: KeyRing?) throws -> ActionLog {
  try ActionLog(directory: dir, access: .readOnly, options: .init(keyRing: ring))
}

/// Which ring opens every entry of the log at `dir` (`nil` if neither does all): a log is never a mix.
private func ringOpeningAll(_ dir: URL, of rings: [KeyRing], count: Int) throws -> Int? {
  for (index, ring) in rings.enumerated() {
    let log = try readOnly(dir, ring)
    defer { try? log.close() }
    var seen = 0
    do { try log.forEach { _ in seen += 1 } } catch { continue }
    if seen == count { return index }
  }
  return nil
}

// MARK: - Tests

@Suite struct RekeyTests {
  @Test func rekeyEncryptsRotatesAndDecryptsKeepingEveryRecord() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url, options: .init(durability: .full, appID: "rekey"))
    try log.append(contentsOf: (1...50).map {
      try NewEntry(encoding: ["n": "payload-\($0)"], typeName: "put", metadata: ["by": "ann"], codec: .json)
    })
    try log.writeSnapshot(at: 30, state: Array("state-30".utf8), codec: .json, schemaVersion: 2)
    let original = try log.records(in: 1...50)
    try log.close()

    let first = try KeyRing([.random()])
    let second = try KeyRing([.random()])
    let encrypted = try ActionLog.rekey(directory: dir.url, from: nil, to: first)
    #expect(encrypted.entries == 50)
    #expect(encrypted.snapshots == 1)
    #expect(encrypted.keyID == first.current.id)
    #expect(try Data(contentsOf: dir.url.appendingPathComponent("data.mdb")).range(of: Data("payload-7".utf8)) == nil)
    try ActionLog.rekey(directory: dir.url, from: first, to: second)

    let reader = try readOnly(dir.url, second)
    #expect(reader.isEncrypted)
    #expect(try reader.records(in: 1...50).map { [$0.typeName, $0.metadata["by"]!, String(decoding: $0.payload, as: UTF8.self)] }
      == original.map { [$0.typeName, $0.metadata["by"]!, String(decoding: $0.payload, as: UTF8.self)] })
    #expect(try reader.records(in: 1...50).map(\.timestamp) == original.map(\.timestamp))
    #expect(try reader.snapshot(at: 30)?.state == Array("state-30".utf8))
    #expect(try reader.verify().isValid)
    try reader.close()
    // The old key opens nothing any more; the writer reopens with the new one and builds the tree.
    let stale = try readOnly(dir.url, first)
    #expect(throws: LogError.self) { try stale.record(at: 1) }
    try stale.close()
    let writer = try ActionLog(directory: dir.url, options: .init(keyRing: second))
    try writer.append(try NewEntry(encoding: ["n": "after"], typeName: "put", codec: .json))
    #expect(try writer.treeRoot(size: 51).count == 32)
    try writer.close()

    try ActionLog.rekey(directory: dir.url, from: second, to: nil)
    let plain = try readOnly(dir.url, nil)
    defer { try? plain.close() }
    #expect(!plain.isEncrypted)
    #expect(try plain.meta().formatVersion == ActionLog.formatVersion)
    #expect(try plain.record(at: 51)?.payload == Array("{\"n\":\"after\"}".utf8))
    #expect(try plain.verify().isValid)
  }

  @Test func aWrongOldKeyChangesNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let ring = try KeyRing([.random()])
    let log = try ActionLog(directory: dir.url, options: .init(durability: .full, keyRing: ring))
    try log.append(try NewEntry(encoding: 1, typeName: "one", codec: .cbor))
    try log.close()
    let before = try Data(contentsOf: dir.url.appendingPathComponent("data.mdb"))
    #expect(throws: LogError.self) {
      try ActionLog.rekey(directory: dir.url, from: try KeyRing([.random()]), to: try KeyRing([.random()]))
    }
    #expect(try Data(contentsOf: dir.url.appendingPathComponent("data.mdb")) == before)
    #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent(".rekey-tmp").path))
  }

  @Test func killedRekeyLeavesTheOldLogOrTheNewOneNeverAMix() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let keys = try TemporaryDirectory()
    defer { keys.remove() }
    let count = 12_000
    let rings = [try KeyRing([.random()]), try KeyRing([.random()])]
    let files = [try keyFile(rings[0], in: keys, "a.keys"), try keyFile(rings[1], in: keys, "b.keys")]
    let log = try ActionLog(directory: dir.url, options: .init(durability: .normal, flushInterval: nil, keyRing: rings[0]))
    try log.append(contentsOf: (1...count).map { try NewEntry(encoding: ["n": $0], typeName: "n", codec: .cbor) })
    try log.writeSnapshot(at: UInt64(count), state: [0xa0], codec: .cbor, schemaVersion: 1)
    try log.close()

    var current = 0
    var outcomes: [String] = []
    // Kill points: after some progress lines, and at random moments after the last one (the sync and the swap).
    let killAfter = ["at 4096", "at 8192", "at 12000", "at 12000", "at 12000", "at 12000", "at 12000"]
    for (round, line) in killAfter.enumerated() {
      let child = try ChildProcess(
        "chronicle-log-probe", ["rekey", dir.url.path, files[current].path, files[1 - current].path])
      _ = child.output.waitFor(timeout: 120) { $0.contains { $0.text == line || $0.text == "rekeyed" } }
      if round >= 3 { usleep(UInt32.random(in: 0...40_000)) }
      child.kill()
      _ = child.wait()
      let opener = try #require(try ringOpeningAll(dir.url, of: rings, count: count), "round \(round): a mixed log")
      outcomes.append(opener == current ? "old" : "new")
      current = opener
      let reader = try readOnly(dir.url, rings[current])
      let report = try reader.verify()
      #expect(report.isValid, "round \(round): \(report.problems)")
      #expect(try reader.snapshot(at: UInt64(count))?.state == [0xa0])
      try reader.close()
    }
    // Rekeying once more finishes the job and removes the leftovers.
    try ActionLog.rekey(directory: dir.url, from: rings[current], to: rings[1 - current])
    #expect(try ringOpeningAll(dir.url, of: rings, count: count) == 1 - current)
    #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent(".rekey-tmp").path))
    #expect(outcomes.contains("old"))
    print("killed rekey outcomes: \(outcomes)")
  }
}
