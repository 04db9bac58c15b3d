import Chronicle
import ChronicleLog
import ChroniclePostgres
import ChronicleTestSupport
import ChronicleTestTools
import Foundation
import PostgresNIO
import Testing

// MARK: - Shared streams against PostgreSQL

/// Devices sharing one stream through the suite's PostgreSQL: they end with byte-identical copies,
/// conflicts are settled once and recorded the same everywhere, encrypted streams keep the server
/// blind, and live devices hear of each other without polling.
@Suite(.needsPostgres) struct SharedStreamTests {
  typealias Device = SharedStore<Ledger.State, Ledger.Action>

  /// Runs `body` with a database holding the stream `name` (encrypted or not), its devices
  /// registered for the `postgres` role.
  func withStream<R>(
    _ name: String = "crew", encrypted: Bool = false, devices: [String],
    _ body: (PostgresClient, PostgresServer.Database, SharedStream) async throws -> R
  ) async throws -> R {
    try await withDatabase { client, database in
      let stream = SharedStream(name)
      try await PostgresStreamServer.createStream(stream, encrypted: encrypted, on: client)
      for device in devices { try await PostgresStreamServer.registerDevice(device, role: "postgres", in: stream, on: client) }
      return try await body(client, database, stream)
    }
  }

  func open(
    _ directory: TemporaryDirectory, _ device: String, stream: SharedStream, ring: KeyRing? = nil,
    pullBatchSize: Int = 1_000
  ) throws -> Device {
    try SharedStore(
      initialState: Ledger.State(), reducer: Ledger(), directory: directory.child(device), stream: stream,
      device: device, options: SharedStoreOptions(keyRing: ring, pullBatchSize: pullBatchSize),
      validators: [Ledger.noOverdraft])
  }

  /// Runs `body` with the stream's server and two devices, ann and bob, each in a new directory.
  func withAnnAndBob<R>(
    _ name: String = "crew", ring: KeyRing? = nil, bobPullBatchSize: Int = 1_000,
    _ body: (PostgresClient, PostgresStreamServer, Device, Device) async throws -> R
  ) async throws -> R {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await withStream(name, encrypted: ring != nil, devices: ["ann", "bob"]) { client, _, stream in
      let server = PostgresStreamServer(client: client, stream: stream)
      let ann = try open(directory, "ann", stream: stream, ring: ring)
      let bob = try open(directory, "bob", stream: stream, ring: ring, pullBatchSize: bobPullBatchSize)
      defer {
        try? ann.close()
        try? bob.close()
      }
      return try await body(client, server, ann, bob)
    }
  }

  /// The head, root and (device, outbox seq) of every entry of a device's copy, read from its files.
  func copy(at url: URL, ring: KeyRing? = nil) throws -> (head: ChainAnchor, root: [UInt8], sent: [String]) {
    let log = try ActionLog(directory: url, access: .readOnly, options: .init(keyRing: ring))
    defer { try? log.close() }
    var sent: [String] = []
    try log.forEach { entry in
      sent.append("\(entry.metadata["chronicle.device"] ?? "?") \(entry.metadata["chronicle.pending"] ?? "?")")
    }
    let head = try log.head()
    return (head, try log.treeRoot(size: head.seq), sent)
  }

  // MARK: Conflicts

  /// Two devices, both offline, each withdraw what only one of them can: after they sync, the stream
  /// holds the first push and records the second as refused, and both devices say so the same way.
  @Test func conflictingOfflineActionsEndWithOneInTheStreamAndOneRejectedOnBothDevices() async throws {
    try await withAnnAndBob { client, server, ann, bob in
      try ann.send(.deposit("petty cash", cents: 100))
      try await ann.sync(with: server)
      try await bob.sync(with: server)
      #expect(bob.state.balances == ["petty cash": 100])
      // Offline, each takes 80 of the 100: each device accepts its own.
      let heard = Recorder<String>()
      let annToken = ann.onRejection { heard.append("ann: \($0.device) \($0.pendingSeq) \($0.reason)") }
      let bobToken = bob.onRejection { heard.append("bob: \($0.device) \($0.pendingSeq) \($0.reason)") }
      defer {
        annToken.cancel()
        bobToken.cancel()
      }
      try ann.send(.withdraw("petty cash", cents: 80), metadata: ["for": "taxi"])
      try bob.send(.withdraw("petty cash", cents: 80), metadata: ["for": "lunch"])
      #expect(ann.state.balances == ["petty cash": 20])
      #expect(bob.state.balances == ["petty cash": 20])
      // Ann pushes first; Bob's withdrawal, rebased on it, breaks the rule.
      let annReport = try await ann.sync(with: server)
      #expect(annReport.pushed == 1)
      let bobReport = try await bob.sync(with: server)
      #expect(bobReport.rejected == 1)
      #expect(bob.pending.isEmpty)
      try await ann.sync(with: server)
      for _ in 0..<100 where heard.values.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
      #expect(heard.values == ["bob: bob 1 no account may go below zero"])
      for device in [ann, bob] {
        #expect(device.state.balances == ["petty cash": 20])
        #expect(device.head.seq == 3)
        let rejections = try device.rejections()
        #expect(rejections.map(\.device) == ["bob"])
        #expect(rejections.map(\.action) == [.withdraw("petty cash", cents: 80)])
        #expect(rejections.map(\.metadata["for"]) == ["lunch"])
        #expect(rejections.map(\.streamSeq) == [3])
      }
      #expect(ann.head == bob.head)
      #expect(try ann.treeRoot() == bob.treeRoot())
      // The server holds the refusal as a marker entry, with the device it came from.
      let kinds = try await column(
        client, "SELECT kind || ' ' || type_name || ' ' || device FROM chronicle.entries ORDER BY seq", as: String.self)
      #expect(kinds == ["action deposit ann", "action withdraw ann", "marker chronicle.rejected bob"])
    }
  }

  // MARK: Undo

  /// Undo in a shared stream takes back the device's own action and keeps what others sent, before
  /// and after it; redo puts it back; an undo that other devices' actions make break a rule is
  /// refused at push, recorded and reported; every device folds the same way at every entry.
  @Test func undoTakesBackOwnActionsAndKeepsOthersWork() async throws {
    try await withAnnAndBob { _, server, ann, bob in
      func syncBoth() async throws {
        try await ann.sync(with: server)
        try await bob.sync(with: server)
        try await ann.sync(with: server)
      }
      try ann.send(.deposit("till", cents: 100))
      try bob.send(.deposit("till", cents: 20))
      try await syncBoth()
      #expect(ann.state.balances == ["till": 120])
      // Bob cannot take back Ann's action: his own is his latest.
      try ann.undo(metadata: ["why": "counted twice"])
      #expect(ann.state.balances == ["till": 20])
      try bob.send(.deposit("till", cents: 5))
      try await syncBoth()
      try bob.send(.deposit("till", cents: 1))
      try await syncBoth()
      // Ann's deposit is gone; Bob's deposits, before and after her undo, stay.
      #expect(ann.state.balances == ["till": 26])
      #expect(bob.state.balances == ["till": 26])
      try ann.redo()
      try await syncBoth()
      #expect(bob.state.balances == ["till": 126])
      // Ann takes it back again, offline, while Bob spends what only her deposit covers.
      let heard = Recorder<String>()
      let token = ann.onRejection { heard.append("\($0.isRevert) \($0.action) \($0.reason)") }
      defer { token.cancel() }
      try ann.undo()
      #expect(ann.state.balances == ["till": 26])
      try bob.send(.withdraw("till", cents: 30))
      try await bob.sync(with: server)
      let report = try await ann.sync(with: server)
      #expect(report.rejected == 1)
      try await bob.sync(with: server)
      for _ in 0..<100 where heard.values.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
      #expect(heard.values == ["true deposit(\"till\", cents: 100) no account may go below zero"])
      #expect(ann.state.balances == ["till": 96])
      #expect(bob.state.balances == ["till": 96])
      #expect(try bob.rejections().map(\.isRevert) == [true])
      // The same history, folded the same way, at every entry.
      #expect(ann.head == bob.head)
      #expect(try ann.treeRoot() == bob.treeRoot())
      for seq in 0...ann.head.seq { #expect(try ann.state(at: seq) == bob.state(at: seq), "entry \(seq)") }
      #expect(try ann.state(at: 3) == Ledger.State(balances: ["till": 20]))
      // A redo is possible again: the refused undo took nothing back.
      #expect(!ann.canRedo)
      #expect(ann.canUndo)
    }
  }

  // MARK: Catching up

  /// A device that was offline while thousands of entries arrived catches up in batches, with progress.
  @Test func anOfflineDeviceCatchesUpInBatchesWithProgress() async throws {
    try await withAnnAndBob(bobPullBatchSize: 500) { _, server, ann, bob in
      for round in 0..<5 {
        for index in 0..<500 { try ann.send(.deposit("a\(round)", cents: index)) }
        try await ann.sync(with: server)
      }
      try bob.send(.deposit("b", cents: 7))
      let progress = Recorder<UInt64>()
      let report = try await bob.sync(with: server) { progress.append($0.head) }
      #expect(Array(progress.values.prefix(5)) == [500, 1_000, 1_500, 2_000, 2_500])
      #expect(report.pushed == 1)
      #expect(bob.head.seq == 2_501)
      try await ann.sync(with: server)
      #expect(ann.head == bob.head)
      #expect(ann.state == bob.state)
      #expect(try bob.state(at: 500) == ann.state(at: 500))
    }
  }

  // MARK: Encrypted streams

  /// An encrypted stream: the devices share the key ring, the server stores and checks ciphertext only.
  @Test func anEncryptedStreamKeepsTheServerBlind() async throws {
    try await withAnnAndBob("clinic", ring: try KeyRing([.random()])) { client, server, ann, bob in
      try ann.send(.deposit("patient-4711", cents: 12_345))
      try await ann.sync(with: server)
      try await bob.sync(with: server)
      try bob.send(.withdraw("patient-4711", cents: 45))
      try await bob.sync(with: server)
      try await ann.sync(with: server)
      #expect(ann.state.balances == ["patient-4711": 12_300])
      #expect(ann.head == bob.head)
      let bodies = try await column(client, "SELECT body FROM chronicle.entries ORDER BY seq", as: ByteBuffer.self)
      #expect(bodies.count == 2)
      for body in bodies {
        let text = String(decoding: body.readableBytesView, as: UTF8.self)
        #expect(!text.contains("patient") && !text.contains("ann") && !text.contains("bob"))
      }
      let clear = try await column(
        client, "SELECT count(*) FROM chronicle.entries WHERE metadata IS NOT NULL OR payload <> ''::bytea",
        as: Int64.self)
      #expect(clear == [0])
      // The server still checks the chain and the tree over the ciphertext.
      let root = try await value(
        client, "SELECT chronicle.tree_root(\(bytea(ann.stream.id)), 2)", as: ByteBuffer.self)
      #expect(Array(root.readableBytesView) == (try ann.treeRoot()))
    }
  }

  // MARK: Live

  /// Two devices syncing continuously: an action sent on one reaches the other's observer on the
  /// main actor through LISTEN/NOTIFY, without polling.
  @Test func liveDevicesHearOfEachOthersActions() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    try await withStream(devices: ["ann", "bob"]) { client, _, stream in
      let annServer = PostgresStreamServer(client: client, stream: stream)
      let bobServer = PostgresStreamServer(client: client, stream: stream)
      let ann = try open(directory, "ann", stream: stream)
      let bob = try open(directory, "bob", stream: stream)
      let annSync = Task { await ann.syncContinuously(with: annServer) }
      let bobSync = Task { await bob.syncContinuously(with: bobServer) }
      let seen = Recorder<Int>()
      let token = bob.subscribe { new, _ in
        MainActor.assertIsolated()
        seen.append(new.balances["till"] ?? 0)
      }
      var delays: [Duration] = []
      for round in 1...5 {
        let sent = ContinuousClock.now
        try ann.send(.deposit("till", cents: 1))
        while !seen.values.contains(round), ContinuousClock.now - sent < .seconds(5) {
          try await Task.sleep(for: .milliseconds(1))
        }
        delays.append(ContinuousClock.now - sent)
      }
      #expect(seen.values.contains(5))
      #expect(delays.allSatisfy { $0 < .seconds(2) }, "\(delays)")
      token.cancel()
      annSync.cancel()
      bobSync.cancel()
      await annSync.value
      await bobSync.value
      try ann.close()
      try bob.close()
      await annServer.close()
      await bobServer.close()
    }
  }

  // MARK: Checkpoints

  /// A checkpoint signed on one device verifies on another: their copies are the same log.
  @Test func aCheckpointSignedOnOneDeviceVerifiesOnAnother() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    try await withStream(devices: ["ann", "bob"]) { client, _, stream in
      let server = PostgresStreamServer(client: client, stream: stream)
      do {
        let ann = try open(directory, "ann", stream: stream)
        let bob = try open(directory, "bob", stream: stream)
        for index in 0..<20 {
          try (index % 2 == 0 ? ann : bob).send(.deposit("x", cents: index))
          try await (index % 2 == 0 ? ann : bob).sync(with: server)
        }
        try await ann.sync(with: server)
        try await bob.sync(with: server)
        try ann.close()
        try bob.close()
      }
      let signer = try NoteSigner.generate(name: "auditor")
      let annCopy = try ActionLog(directory: directory.child("ann"))
      let note = try annCopy.signCheckpoint(with: signer)
      try annCopy.close()
      let bobCopy = try ActionLog(directory: directory.child("bob"), access: .readOnly)
      defer { try? bobCopy.close() }
      let verification = try bobCopy.verify(checkpoint: note, verifier: signer.verifier)
      #expect(verification.isValid, "\(verification)")
      #expect(verification.checkpoint.size == 20)
    }
  }

  // MARK: A server that lost or changed the stream

  /// The records of entries `range` of a device's copy, as the server would hold them.
  func records(of url: URL, _ range: ClosedRange<UInt64>) throws -> [StreamRecord] {
    let log = try ActionLog(directory: url, access: .readOnly)
    defer { try? log.close() }
    return try range.map { seq in
      let value = try #require(try log.storedValue(seq: seq))
      let device = try #require(try log.record(at: seq)?.metadata["chronicle.device"])
      return StreamRecord(seq: seq, body: Array(value.dropLast(32)), hash: Array(value.suffix(32)), device: device)
    }
  }

  /// A device whose server was restored from an older backup, or whose stream was rewritten on the
  /// server, stops syncing with an error that says which, and keeps everything it holds.
  @Test func aServerRestoredFromABackupOrChangedBehindItsChecksStopsTheSyncWithAClearError() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    try await withStream(devices: ["ann"]) { client, _, stream in
      do {
        let ann = try open(directory, "ann", stream: stream)
        for index in 1...6 { try ann.send(.deposit("x", cents: index)) }
        try await ann.sync(with: PostgresStreamServer(client: client, stream: stream))
        try ann.close()
      }
      // A database restored from a backup taken after entry 3.
      let restored = try await PostgresServer.shared.makeDatabase()
      try await withClient(restored.configuration) { client in
        try await PostgresSchema.migrate(client)
        try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
        try await PostgresStreamServer.registerDevice("ann", role: "postgres", in: stream, on: client)
        let server = PostgresStreamServer(client: client, stream: stream)
        #expect(try await server.append(try records(of: directory.child("ann"), 1...3), previousHash: ChainAnchor.genesis.hash))
        let ann = try open(directory, "ann", stream: stream)
        defer { try? ann.close() }
        try ann.send(.deposit("x", cents: 7))
        await #expect(throws: SyncError.serverBehind(path: ann.path, serverHead: nil, deviceHead: 6)) {
          try await ann.sync(with: server)
        }
        #expect(ann.pending.count == 1)
        #expect(ann.head.seq == 6)
        let state = try #require(try SharedStreamStatus.SyncState.read(from: directory.child("ann")))
        #expect(state.online == false)
        #expect(state.lastError?.contains("restored from an older backup") == true)
        // The owner puts the lost entries back from the device's copy; the device syncs again.
        #expect(try await PostgresStreamServer.restore(stream, from: directory.child("ann"), on: client) == 3)
        try await ann.sync(with: server)
        #expect(ann.pending.isEmpty)
        #expect(ann.head.seq == 7)
        #expect(try await PostgresStreamServer.restore(stream, from: directory.child("ann"), on: client) == 0)
      }
      // A database whose stream holds other entries: written by another copy.
      let rewritten = try await PostgresServer.shared.makeDatabase()
      try await withClient(rewritten.configuration) { client in
        try await PostgresSchema.migrate(client)
        try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
        try await PostgresStreamServer.registerDevice("ann", role: "postgres", in: stream, on: client)
        let server = PostgresStreamServer(client: client, stream: stream)
        let forger = try SharedStore(
          initialState: Ledger.State(), reducer: Ledger(), directory: directory.child("forger"), stream: stream,
          device: "ann", validators: [Ledger.noOverdraft])
        for index in 1...8 { try forger.send(.deposit("y", cents: index)) }
        try await forger.sync(with: server)
        try forger.close()
        let ann = try open(directory, "ann", stream: stream)
        defer { try? ann.close() }
        await #expect(throws: SyncError.forked(path: ann.path, seq: 7)) { try await ann.sync(with: server) }
        #expect(ann.head.seq == 7)
        #expect(ann.state.balances == ["x": 28])
      }
    }
  }

  // MARK: Processes, kills and a server restart

  /// Three device processes write one stream at once: one starts offline and joins later, one is
  /// killed with SIGKILL twice and restarted, and the server crashes and restarts in the middle.
  /// At the end every device holds the same entries (same head and root, the server's too), every
  /// acknowledged action is in the stream once (as itself or as a refusal), and none twice.
  @Test func threeDeviceProcessesThroughKillsAndAServerRestartEndByteIdentical() async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let devices = ["ann", "bob", "cyd"]
    try await withStream(devices: devices) { client, database, stream in
      let offline = directory.child("cyd-offline").path
      _ = FileManager.default.createFile(atPath: offline, contents: nil)
      var acked: Set<String> = []
      var reported: [String] = []
      func start(_ device: String, count: Int) throws -> ChildProcess {
        let child = try ChildProcess(
          "chronicle-sync-probe",
          [
            directory.child(device).path, device, "\(database.port)", database.name, PostgresServer.password,
            "\(count)", device == "cyd" ? offline : directory.child("never").path,
          ], errors: .capture)
        guard child.readLine(timeout: 60)?.hasPrefix("ready") == true else {
          child.kill()
          throw ServerError("\(device) did not start: \(child.errors?.text ?? "")")
        }
        return child
      }
      func collect(_ device: String, _ child: ChildProcess) {
        for line in child.output.texts {
          if line.hasPrefix("ack ") { acked.insert("\(device) \(line.dropFirst(4))") }
          if line.hasPrefix("rejected ") { reported.append("\(device) \(line.dropFirst(9))") }
        }
      }
      func finish(_ device: String, _ child: ChildProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !child.output.texts.contains(where: { $0.hasPrefix("done") }), ContinuousClock.now < deadline,
          !child.output.hasEnded
        {
          try await Task.sleep(for: .milliseconds(50))
        }
        #expect(child.output.texts.contains { $0.hasPrefix("done") }, "\(device): \(child.errors?.text ?? "")")
        _ = child.wait(timeout: 30)
        collect(device, child)
      }
      var ann = try start("ann", count: 600)
      var bob = try start("bob", count: 300)
      let cyd = try start("cyd", count: 400)
      // Bob is killed twice, mid-run; a new process takes over his directory and outbox.
      for _ in 0..<2 {
        try await Task.sleep(for: .milliseconds(400))
        bob.kill()
        collect("bob", bob)
        bob = try start("bob", count: 150)
      }
      // The server crashes and comes back; the devices keep sending meanwhile.
      try await PostgresServer.shared.crash()
      let down = Date()
      try await Task.sleep(for: .milliseconds(700))
      try await PostgresServer.shared.restart()
      let up = Date()
      #expect(ann.output.lines.contains { $0.text.hasPrefix("ack") && $0.time > down && $0.time < up })
      // Cyd, offline all along, joins.
      try await Task.sleep(for: .milliseconds(300))
      try FileManager.default.removeItem(atPath: offline)
      try await finish("ann", ann)
      try await finish("bob", bob)
      try await finish("cyd", cyd)
      // A last catch-up round for each, now that everyone is done.
      for device in devices {
        ann = try start(device, count: 0)
        try await finish(device, ann)
      }
      let copies = try devices.map { try copy(at: directory.child($0)) }
      #expect(Set(copies.map(\.head)).count == 1)
      #expect(Set(copies.map(\.root)).count == 1)
      let head = copies[0].head
      #expect(head.seq > 800)
      let serverRoot = try await value(
        client, "SELECT chronicle.tree_root(\(bytea(stream.id)), \(Int64(head.seq)))", as: ByteBuffer.self)
      #expect(Array(serverRoot.readableBytesView) == copies[0].root)
      // Every entry is one device's action, once; every acknowledged action is there.
      let sent = copies[0].sent
      #expect(Set(sent).count == sent.count, "an action entered the stream twice")
      #expect(acked.subtracting(sent).isEmpty, "acknowledged but missing: \(acked.subtracting(sent).sorted().prefix(5))")
      // Every refusal a device reported is a refusal the stream records.
      let log = try ActionLog(directory: directory.child("ann"), access: .readOnly)
      defer { try? log.close() }
      var refusals: Set<String> = []
      try log.forEach { entry in
        if entry.typeName == SharedStreamLayout.rejectedTypeName {
          refusals.insert("\(entry.metadata["chronicle.device"]!) \(entry.metadata["chronicle.pending"]!)")
        }
      }
      #expect(Set(reported).isSubset(of: refusals))
      #expect(acked.count >= 1_000)
      print("three devices: \(head.seq) entries, \(acked.count) acknowledged, \(refusals.count) refused by the stream, \(reported.count) reported")
    }
  }
}
