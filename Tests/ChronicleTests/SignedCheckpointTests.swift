import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

/// A store that signs checkpoints of its log: explicitly, every `checkpointEvery` entries, and at `close()`.
@Suite struct SignedCheckpointTests {
  private let signer = try! NoteSigner(name: "chronicle.test/store", seed: Array(repeating: 5, count: 32))

  private func open(_ dir: TemporaryDirectory, _ options: StoreOptions) throws -> Store<Counter.State, Counter.Action> {
    try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
  }

  /// The log's checkpoints, oldest first, each checked against the log with the signer's verifier.
  private func checkpoints(_ dir: TemporaryDirectory) throws -> [UInt64] {
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    return try log.checkpoints().map { note in
      let result = try log.verify(checkpoint: note, verifier: signer.verifier)
      #expect(result.isValid, "\(result)")
      return try Checkpoint(parsing: note.text).size
    }
  }

  @Test func checkpointSignsTheHeadAndCloseSignsTheFinalOneOnlyWhenTheHeadMoved() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var store = try open(dir, StoreOptions(checkpointSigner: signer, checkpointEvery: 0))
    for _ in 0..<5 { try store.send(.increment) }
    let note = try store.checkpoint()
    let checkpoint = try Checkpoint(parsing: note.text)
    #expect(checkpoint.size == 5)
    try note.verify(by: signer.verifier)
    try store.send(contentsOf: [.increment, .increment, .increment])
    try store.close()
    #expect(try checkpoints(dir) == [5, 8])

    // Reopened and closed without a send: the head did not move, no new checkpoint.
    store = try open(dir, StoreOptions(checkpointSigner: signer, checkpointEvery: 0))
    try store.close()
    #expect(try checkpoints(dir) == [5, 8])
    // An undo moves the head: signed at close.
    store = try open(dir, StoreOptions(checkpointSigner: signer, checkpointEvery: 0))
    try store.undo()
    try store.close()
    #expect(try checkpoints(dir) == [5, 8, 9])
    #expect(throws: ChronicleError.self) { try store.checkpoint() }

    // The key is never written into the log: neither its seed nor its text.
    let bytes = try Data(contentsOf: dir.url.appendingPathComponent("data.mdb"))
    #expect(bytes.range(of: Data(repeating: 5, count: 32)) == nil)
    #expect(bytes.range(of: Data(signer.privateKeyText.utf8)) == nil)
    #expect(bytes.range(of: Data(signer.verifier.publicKey)) == nil, "not even the public key")
  }

  @Test func automaticCheckpointsFollowCommitsThatCrossAMultipleOfTheInterval() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let background = Recorder<String>()
    let store = try open(
      dir, StoreOptions(onBackgroundError: { background.append("\($0)") }, checkpointSigner: signer, checkpointEvery: 10))
    for _ in 0..<7 { try store.send(.increment) }
    try store.send(contentsOf: Array(repeating: .increment, count: 5))  // 8…12 crosses 10
    for _ in 0..<8 { try store.send(.increment) }  // 20 is a multiple
    try store.send(contentsOf: Array(repeating: .increment, count: 25))  // 21…45 crosses 30 and 40: one checkpoint
    try store.send(.increment)  // 46
    try store.undo()  // 47
    try store.send(contentsOf: Array(repeating: .increment, count: 3))  // 48…50
    try store.close()  // the head did not move since 50
    #expect(background.values.isEmpty)
    #expect(try checkpoints(dir) == [12, 20, 45, 50])
  }

  @Test func withoutASignerNothingIsSignedAndCheckpointNamesWhy() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir, StoreOptions(checkpointEvery: 1))
    try store.send(.increment)
    do {
      try store.checkpoint()
      Issue.record("a store without a signer signed a checkpoint")
    } catch ChronicleError.noCheckpointSigner {
      #expect("\(ChronicleError.noCheckpointSigner)".contains("StoreOptions.checkpointSigner"))
    }
    try store.close()
    #expect(try checkpoints(dir).isEmpty)
  }

  @Test func readersCannotSign() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try open(dir, StoreOptions(checkpointEvery: 0))
    try store.send(.increment)
    try store.close()
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    #expect(throws: LogError.self) { try log.signCheckpoint(with: signer) }
    #expect(try log.checkpoints().isEmpty)
  }

  /// A log whose tree cannot follow its entries (its newest entries were removed by hand): the
  /// automatic checkpoint fails, is reported as background work, and the send succeeds.
  @Test func aFailedAutomaticCheckpointIsReportedAndNeverFailsTheSend() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var store = try open(dir, StoreOptions(snapshotEvery: 0, checkpointEvery: 0))
    try store.send(contentsOf: Array(repeating: .increment, count: 40))
    try store.close()
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 8))
    try env.write { txn in
      let entries = try txn.openDatabase(named: "entries")
      for seq in UInt64(25)...40 { _ = try txn.delete(forKey: withUnsafeBytes(of: seq.bigEndian) { Array($0) }, in: entries) }
      try txn.empty(try txn.openDatabase(named: "snapshots"))
    }
    env.close()

    let background = Recorder<String>()
    store = try open(
      dir,
      StoreOptions(
        onBackgroundError: { error in
          if case .checkpointFailed(let seq, let underlying) = error {
            background.append("\(seq) \(underlying is TreeError)")
          } else {
            background.append("unexpected: \(error)")
          }
        }, checkpointSigner: signer, checkpointEvery: 1))
    #expect(store.lastSeq == 24)
    #expect(try store.send(.increment) == 25)
    #expect(try store.send(contentsOf: [.increment, .increment]) == 26...27)
    #expect(background.values == ["25 true", "27 true"])
    #expect(store.state.count == 27)
    do {
      try store.checkpoint()
      Issue.record("a checkpoint was signed over a tree that does not follow the entries")
    } catch ChronicleError.checkpointFailed(let seq, _) {
      #expect(seq == 27)
    }
    // close() reports the failed final checkpoint, and closes all the same.
    #expect(throws: ChronicleError.self) { try store.close() }
    #expect(throws: ChronicleError.self) { try store.send(.increment) }
    let log = try ActionLog(directory: dir.url, access: .readOnly)
    defer { try? log.close() }
    #expect(try log.head().seq == 27)
    #expect(try log.checkpoints().isEmpty)
  }
}
