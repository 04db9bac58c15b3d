import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// Real child processes maintaining the Merkle tree and signing checkpoints, killed with SIGKILL
/// at random moments: after each kill the stored tree is exactly the one recomputed from the entries.
@Suite struct CheckpointCrashTests {
  /// Batches large enough for their subtrees to be worked out on a second thread while their entries
  /// are put, between small ones added in the transaction: the stored tree is the recomputed one.
  @Test func batchesOfEverySizeStoreTheTreeTheEntriesMake() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    var random = SplitMix64(seed: 0x6A0)
    var written = 0
    for size in [1, 1_000, 63, 64, 1, 1_003, 17, 65, 4_096, 2] {
      let entries = (0..<size).map { _ in
        NewEntry(typeName: "n", codec: .cbor, payload: [0x1a] + (0..<4).map { _ in UInt8.random(in: 0...255, using: &random) })
      }
      try log.append(contentsOf: entries)
      written += size
    }
    try log.close()
    let expected = try StoredTreeCheck.recomputed(dir.url)
    #expect(expected.head == UInt64(written))
    #expect(try StoredTreeCheck.stored(dir.url) == expected.subtrees)
    let reopened = try ActionLog(directory: dir.url)
    defer { try? reopened.close() }
    #expect(try reopened.verify().isValid)
  }

  /// The seed of the kill moments and of the children's sends; set CHRONICLE_CRASH_SEED to replay a run.
  static let seed = UInt64(ProcessInfo.processInfo.environment["CHRONICLE_CRASH_SEED"] ?? "") ?? 0x5EED_17
  /// The key `chronicle-probe store-sign` signs with.
  private let signer = try! NoteSigner(name: "chronicle.test/crash", seed: Array(repeating: 7, count: 32))

  /// Checks the closed log in `url` after a kill; returns its newest entry and its checkpoint sizes.
  ///
  /// Every checkpoint's signature, origin and root are checked against the log's tree; the newest
  /// and one of those added since `earlier` are also verified against the entries
  /// themselves (`verify(checkpoint:verifier:)`, one pass over the log each).
  private func checkKilledLog(
    _ url: URL, _ context: String, earlier: [UInt64], random: inout SplitMix64
  ) throws -> (head: UInt64, checkpoints: [UInt64]) {
    let log = try ActionLog(directory: url, access: .readOnly)
    let report = try log.verify()
    #expect(report.isValid, "\(context): \(report.problems)")
    let head = report.range?.upperBound ?? 0
    #expect(try log.treeSize == head, "\(context): the tree follows the entries")
    let notes = try log.checkpoints()
    let added = notes.indices.dropFirst(earlier.count)
    let passes = Set([notes.indices.last].compactMap { $0 } + [added.randomElement(using: &random)].compactMap { $0 })
    let origin = try log.origin()
    var sizes: [UInt64] = []
    for (index, note) in notes.enumerated() {
      let checkpoint = try Checkpoint(parsing: note.text)
      #expect(checkpoint.size <= head, "\(context): checkpoint of \(checkpoint.size) entries, head \(head)")
      guard checkpoint.size <= head else { continue }
      #expect(throws: Never.self, "\(context): checkpoint \(checkpoint)") { try note.verify(by: signer.verifier) }
      #expect(checkpoint.origin == origin, "\(context)")
      #expect(checkpoint.rootHash == (try log.treeRoot(size: checkpoint.size)), "\(context): checkpoint \(checkpoint)")
      if passes.contains(index) {
        let result = try log.verify(checkpoint: note, verifier: signer.verifier)
        #expect(result.isValid, "\(context): checkpoint \(checkpoint): \(result.problems)")
      }
      sizes.append(checkpoint.size)
    }
    try log.close()
    let recomputed = try StoredTreeCheck.recomputed(url)
    #expect(recomputed.head == head, "\(context)")
    let stored = try StoredTreeCheck.stored(url)
    let differing = Set(stored.keys).symmetricDifference(recomputed.subtrees.keys).sorted { $0.end < $1.end }
    #expect(stored == recomputed.subtrees, "\(context): stored and recomputed differ at \(differing.prefix(5))")
    return (head, sizes)
  }

  @Test func killedSigningWritersLeaveTheTreeAndEveryCheckpointVerifiable() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var random = SplitMix64(seed: Self.seed)
    var acknowledged: UInt64 = 0
    var checkpoints: [UInt64] = []
    var killedMidRun = 0
    for iteration in 0..<24 {
      let context = "seed \(Self.seed) iteration \(iteration)"
      let child = try ChildProcess("chronicle-probe", ["store-sign", dir.path, "\(random.next())"])
      let ready = try #require(child.readLine(), "\(context): the writer opens")
      let reopened = try #require(UInt64(ready.dropFirst("ready ".count)), "\(context): \(ready)")
      #expect(reopened >= acknowledged, "\(context): acknowledged \(acknowledged), reopened at \(reopened)")
      let deadline = Date().addingTimeInterval(Double(UInt64.random(in: 5...80, using: &random)) / 1_000)
      while let line = child.readLine(before: deadline) { acknowledged = try #require(UInt64(line), "\(context)") }
      child.kill()
      while let line = child.readLine() { acknowledged = try #require(UInt64(line), "\(context)") }
      if child.process.terminationReason == .uncaughtSignal { killedMidRun += 1 }

      let (head, sizes) = try checkKilledLog(dir.url, context, earlier: checkpoints, random: &random)
      #expect(head >= acknowledged, "\(context): acknowledged \(acknowledged), found \(head)")
      #expect(sizes.starts(with: checkpoints), "\(context): earlier checkpoints are kept")
      checkpoints = sizes
      acknowledged = head
    }
    #expect(killedMidRun == 24)
    // Automatic ones every 7 entries and explicit ones: many, each verified above.
    #expect(checkpoints.count > 24, "\(checkpoints.count) checkpoints over \(acknowledged) entries")
  }

  @Test func killedTreeBuildsOnOpenLeaveOnlyCorrectSubtreesAndTheNextWriterFinishes() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    // More than three build chunks (TreeStorage.buildChunk entries per transaction).
    let total = Int(TreeStorage.buildChunk) * 3 + 5_000
    let log = try ActionLog(directory: dir.url)
    var written = 0
    while written < total {
      let batch = min(25_000, total - written)
      // The same small payload each time (the CBOR integer 1): the leaves differ by their sequence numbers.
      let entry = NewEntry(typeName: "n", codec: .cbor, payload: [0x01])
      try log.append(contentsOf: Array(repeating: entry, count: batch))
      written += batch
    }
    try log.close()
    let expected = try StoredTreeCheck.recomputed(dir.url)
    #expect(expected.head == UInt64(total))
    #expect(try StoredTreeCheck.stored(dir.url) == expected.subtrees)

    /// Deletes the stored subtrees that reach past the first `leaves` entries, as a log of an older
    /// version (no tree) or an interrupted build leaves it.
    func cutTree(beyond leaves: UInt64) throws {
      let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
      defer { env.close() }
      let tree = try env.openDatabase(named: TreeStorage.treeName)
      try env.write { try $0.deleteSubtrees(beyond: leaves, in: tree) }
    }

    // How long a whole build takes here, from the start of the process to its "open".
    try cutTree(beyond: 0)
    #expect(try StoredTreeCheck.stored(dir.url).isEmpty)
    let start = Date()
    let whole = try ChildProcess.run("chronicle-log-probe", ["open-writer", dir.path])
    let buildTime = Date().timeIntervalSince(start)
    #expect(whole.status == 0 && whole.stdout == "open\n", "\(whole.stderr)")
    #expect(try StoredTreeCheck.stored(dir.url) == expected.subtrees)

    var random = SplitMix64(seed: Self.seed)
    var interrupted = 0
    for iteration in 0..<6 {
      let context = "seed \(Self.seed) iteration \(iteration), build of \(String(format: "%.2f", buildTime)) s"
      try cutTree(beyond: iteration == 0 ? 0 : UInt64.random(in: 0...UInt64(total / 4), using: &random))
      let child = try ChildProcess("chronicle-log-probe", ["open-writer", dir.path])
      usleep(UInt32(buildTime * Double(UInt64.random(in: 10...75, using: &random)) / 100 * 1e6))
      child.kill()
      if !child.output.texts.contains("open") { interrupted += 1 }
      // Exactly the complete subtrees of the entries the last committed chunk reached: no hole, no wrong hash.
      let stored = try StoredTreeCheck.stored(dir.url)
      let reach = stored.keys.map(\.end).max() ?? 0
      #expect(stored == expected.subtrees.filter { $0.key.end <= reach }, "\(context): reached \(reach)")
      let reader = try ActionLog(directory: dir.url, access: .readOnly)
      #expect(try reader.treeSize >= reach, "\(context)")
      if iteration == 0 {
        // One pass over the entries (slow in a debug build): a partly built tree is no damage.
        let report = try reader.verify()
        #expect(report.isValid, "\(context): \(report.problems)")
      }
      try reader.close()
    }
    #expect(interrupted >= 3, "most kills land inside the build (\(interrupted) of 6)")

    let finish = try ChildProcess.run("chronicle-log-probe", ["open-writer", dir.path])
    #expect(finish.status == 0, "\(finish.stderr)")
    #expect(try StoredTreeCheck.stored(dir.url) == expected.subtrees)
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? reader.close() }
    #expect(try reader.treeSize == UInt64(total))
    let report = try reader.verify()
    #expect(report.isValid, "\(report.problems)")
  }
}
