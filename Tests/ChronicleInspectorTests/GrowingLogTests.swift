import ChronicleInspector
import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

// MARK: - A growing log

/// Stats and verification follow a log another process writes: after growth they read only the
/// new entries, and a log rewritten under the inspector is counted and verified from the start.
@Suite struct GrowingLogTests {
  /// Overwrites every copy of `bytes` in the file at `url` in place (the same inode, so a reader
  /// that maps it sees the change), flipping the first byte of each.
  func flip(_ bytes: [UInt8], in url: URL) throws -> Int {
    let data = [UInt8](try Data(contentsOf: url))
    let handle = try FileHandle(forUpdating: url)
    defer { try? handle.close() }
    var flipped = 0
    var index = 0
    while index + bytes.count <= data.count {
      if data[index] == bytes[0], data[index..<index + bytes.count].elementsEqual(bytes) {
        try handle.seek(toOffset: UInt64(index))
        try handle.write(contentsOf: [bytes[0] ^ 0xFF])
        flipped += 1
        index += bytes.count
      } else {
        index += 1
      }
    }
    return flipped
  }

  @Test func statsAndVerifyReadOnlyTheNewEntries() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-growth")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 300)
    // The chain is verified by the command line tool in a child process, as `logtool serve` does.
    let inspector = try Inspector(
      directory: directory, verifyCommand: [Helpers.url("logtool").path, "verify", "--json", directory.path])
    defer { inspector.close() }
    try await serving(inspector) { client in
      let stats = try await client.get("/api/stats")
      #expect(stats.object["count"] as? Int == 300)
      #expect(stats.object["read"] as? Int == 300)
      let verify = try await client.get("/api/verify")
      let chain = verify.object["chain"] as? [String: Any] ?? [:]
      #expect(chain["valid"] as? Bool == true, "\(verify.text)")
      #expect(chain["entriesChecked"] as? Int == 300)
      #expect(chain["incremental"] == nil)

      let writer = try ChildProcess.run("chronicle-log-probe", ["append", directory.path, "50"])
      #expect(writer.status == 0, "\(writer.stderr)")

      let grown = try await client.get("/api/stats")
      #expect(grown.object["count"] as? Int == 350)
      #expect(grown.object["read"] as? Int == 50, "only the new entries are read: \(grown.text)")
      #expect((grown.object["types"] as? [[String: Any]])?.first { $0["type"] as? String == "n" }?["count"] as? Int == 50)
      let again = try await client.get("/api/verify")
      let extended = again.object["chain"] as? [String: Any] ?? [:]
      #expect(extended["valid"] as? Bool == true, "\(again.text)")
      #expect(extended["entriesChecked"] as? Int == 350)
      #expect((extended["range"] as? [String: Any])?["last"] as? Int == 350)
      let info = try await client.get("/api/info")
      let headHex = try #require((info.object["head"] as? [String: Any])?["hash"] as? String)
      let headHash = try #require(headHex.count == 64 ? stride(from: 0, to: 64, by: 2).compactMap {
        UInt8(headHex.dropFirst($0).prefix(2), radix: 16)
      } : nil)
      #expect(extended["head"] as? String == headHex)
      let incremental = extended["incremental"] as? [String: Any] ?? [:]
      #expect(incremental["after"] as? Int == 300, "\(again.text)")
      #expect(incremental["entriesChecked"] as? Int == 50)

      // No growth: nothing more is read.
      let still = try await client.get("/api/stats")
      #expect(still.object["read"] as? Int == 0)
      let same = try await client.get("/api/verify")
      #expect(((same.object["chain"] as? [String: Any])?["incremental"] as? [String: Any])?["entriesChecked"] as? Int == 0)

      // The stored hash of entry 350 (where both stopped) rewritten under the inspector: the log is
      // no longer the one counted and verified, so both start again, and the chain is damaged.
      #expect(try flip(headHash, in: directory.appendingPathComponent("data.mdb")) >= 1)
      let recounted = try await client.get("/api/stats")
      #expect(recounted.object["read"] as? Int == 350, "\(recounted.text)")
      #expect(recounted.object["count"] as? Int == 350)
      let reverified = try await client.get("/api/verify")
      let full = reverified.object["chain"] as? [String: Any] ?? [:]
      #expect(full["valid"] as? Bool == false, "\(reverified.text)")
      #expect(full["incremental"] == nil, "verified from the start: \(reverified.text)")
      #expect(full["firstBadSeq"] as? Int == 350)
    }
  }

  /// The growth check refuses a prefix of another history: two copies of one log (the same
  /// identifier and anchor) that went different ways after entry 300.
  @Test func aRewrittenHistoryIsNotExtended() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-growth")
    defer { scratch.remove() }
    let first = scratch.child("first")
    let second = scratch.child("second")
    try makeInspectedLog(at: first, count: 300)
    try FileManager.default.copyItem(at: first, to: second)
    for (directory, word) in [(first, "left"), (second, "right")] {
      let log = try ActionLog(directory: directory)
      for n in 0..<20 { try log.append(try NewEntry(encoding: "\(word) \(n)", typeName: "branch", codec: .json)) }
      try log.close()
    }
    let log = try ActionLog(directory: first, access: .readOnly)
    defer { try? log.close() }
    let report = try log.verify()
    let prefix = try log.verifiedPrefix(head: try #require(report.range?.upperBound), hash: report.head)
    #expect(prefix.head.seq == 320 && prefix.treeSize <= 320)
    let other = try ActionLog(directory: second, access: .readOnly)
    defer { try? other.close() }
    #expect(try other.logID() == log.logID())
    #expect(try other.verifyGrowth(from: prefix) == nil)
    // The copy's own prefix at 300, before the histories part, extends over its 20 new entries.
    let shared = try other.verifiedPrefix(head: 300, hash: try #require(try other.record(at: 300)).hash)
    let growth = try #require(try other.verifyGrowth(from: shared))
    #expect(growth.report.isValid, "\(growth.report.problems)")
    #expect(growth.report.entriesChecked == 20)
    #expect(growth.prefix.head == (try other.head()))
  }
}
