import ChronicleTestTools
import Foundation
import Testing

@testable import ChronicleLog

/// The log's machinery in processes of its own: it starts no thread, and its two ways of hashing
/// (the CPU's SHA extensions, swift-crypto) write and accept the same chain and tree.
@Suite struct PlainMachineryTests {
  /// An encrypted batch and its replay, then `close()`: the process has the threads it had before
  /// (the log starts none, so none outlives it).
  @Test func theLogStartsNoThread() throws {
    #if os(Linux)
      let dir = try TemporaryDirectory()
      defer { dir.remove() }
      let result = try ChildProcess.run("chronicle-log-probe", ["threads", dir.path])
      #expect(result.status == 0, "\(result.stderr)")
      let lines = result.stdout.split(separator: "\n").map(String.init)
      let counts = Dictionary(
        uniqueKeysWithValues: lines.compactMap { line -> (String, Int)? in
          let parts = line.split(separator: " ")
          guard parts.count == 2, let count = Int(parts[1]) else { return nil }
          return (String(parts[0]), count)
        })
      let before = try #require(counts["before"])
      #expect(counts["open"] == before, "\(lines)")
      #expect(counts["closed"] == before, "\(lines)")
    #endif
  }

  /// The same entries written by a process that hashes with swift-crypto (forced by
  /// `CHRONICLE_SHA256=swift-crypto`) and by one on this machine's own path give byte-identical
  /// chain heads and tree roots, and each process verifies the other's log.
  @Test func bothHashingPathsWriteAndAcceptTheSameChainAndTree() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let forced = ["CHRONICLE_SHA256": "swift-crypto"]
    func run(_ name: String, _ count: Int, _ environment: [String: String]?) throws -> [String: String] {
      let result = try ChildProcess.run(
        "chronicle-log-probe", ["hashes", dir.child(name).path, "\(count)"],
        environment: environment.map { ProcessInfo.processInfo.environment.merging($0) { $1 } })
      #expect(result.status == 0, "\(result.stderr)")
      return Dictionary(
        uniqueKeysWithValues: result.stdout.split(separator: "\n").compactMap { line in
          line.firstIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
        })
    }
    let portable = try run("portable", 301, forced)
    let native = try run("native", 301, nil)
    #expect(portable["path"] == "swiftCrypto")
    #expect(native["path"] == (SHA256Path.cpuHasExtensions ? "cpuExtensions" : "swiftCrypto"))
    #expect(portable["valid"] == "true" && native["valid"] == "true")
    #expect(portable["head"] != nil && portable["head"] == native["head"])
    #expect(portable["root"] != nil && portable["root"] == native["root"])
    // Each log read back by the other path.
    let crossed = [try run("portable", 0, nil), try run("native", 0, forced)]
    for report in crossed {
      #expect(report["valid"] == "true")
      #expect(report["head"] == native["head"] && report["root"] == native["root"])
    }
  }

  /// A tree level over consecutive subtrees: the same parents on both paths.
  @Test func bothHashingPathsMakeTheSameTreeLevels() {
    var random = SplitMix64(seed: 0x7EE)
    for count in [0, 1, 2, 3, 8, 31, 64] {
      let children = (0..<count).map { _ in
        MerkleDigest((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
      }
      let waiting = count % 2 == 1 ? MerkleDigest([UInt8](repeating: 7, count: 32)) : nil
      var levels: [[MerkleDigest]] = []
      for path in SHA256Path.onThisCPU {
        var parents: [MerkleDigest] = []
        MerkleHash.parents(of: children, after: waiting, into: &parents, path: path)
        levels.append(parents)
      }
      #expect(Set(levels.map { $0.map(\.bytes) }).count == 1, "\(count) children")
      let expected = (waiting.map { [$0] } ?? []) + children
      #expect(levels[0].count == expected.count / 2, "\(count) children")
      for (index, parent) in levels[0].enumerated() {
        #expect(parent.bytes == MerkleHash.node(expected[2 * index].bytes, expected[2 * index + 1].bytes))
      }
    }
  }
}
