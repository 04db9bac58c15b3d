import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

// The reliability suite of SPEC §6 at the engine level: kill -9 torture (during
// snapshot writes and large batches), a matrix of bad input, and tampering.
// CI runs a bounded size; CHRONICLE_HEAVY=1 or CHRONICLE_CRASH_ITERATIONS=N run more.
// `docs/reliability.md` records what each check covers and the numbers of real runs.

/// Sizes of the reliability runs.
enum ReliabilityRun {
  static let environment = ProcessInfo.processInfo.environment
  /// `CHRONICLE_HEAVY=1` runs the large variants.
  static let isHeavy = environment["CHRONICLE_HEAVY"] == "1"
  /// Kills per crash case.
  static let crashIterations = Int(environment["CHRONICLE_CRASH_ITERATIONS"] ?? "") ?? (isHeavy ? 400 : 4)
  /// Fuzz inputs scale by this.
  static let fuzzScale = isHeavy ? 20 : 1
}

/// Large actions, small state: fills a log fast.
struct Blobs: Reducer {
  struct State: Codable, Sendable, Equatable { var count = 0; var bytes = 0 }
  enum Action: Codable, Sendable { case put(Data) }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    guard case .put(let data) = action else { return .none }
    state.count += 1
    state.bytes += data.count
    return .none
  }
}

// MARK: - Helpers

/// The big-endian key of `seq`.
func seqKey(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }

/// Rewrites a closed log's stored values through LMDB, as an attacker (or a disk) with file access could.
func editLog(
  _ url: URL, _ body: (_ txn: Transaction, _ entries: Database, _ snapshots: Database, _ meta: Database) throws -> Void
) throws {
  let env = try Environment(path: url.path, configuration: .init(maxDatabases: 4))
  defer { env.close() }
  let entries = try env.openDatabase(named: "entries")
  let snapshots = try env.openDatabase(named: "snapshots")
  let meta = try env.openDatabase(named: "meta")
  try env.write { try body($0, entries, snapshots, meta) }
}

/// Every file below `path` with its size and contents' hash: proves that a failed open changed nothing.
/// `lock.mdb` counts by size only: it is LMDB's reader table, which opening an environment resets.
func fileFingerprint(_ path: String) -> [String: String] {
  var result: [String: String] = ["": FileManager.default.fileExists(atPath: path) ? "exists" : "absent"]
  for name in (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? [] {
    let data = (try? Data(contentsOf: URL(fileURLWithPath: path + "/" + name))) ?? Data()
    var hasher = Hasher()
    if name != "lock.mdb" { hasher.combine(data) }
    result[name] = "\(data.count) \(hasher.finalize())"
  }
  return result
}

/// What a log holds, entry by entry (seq, hash, payload) and snapshot by snapshot, read without the app's types.
func logListing(_ url: URL) throws -> [String] {
  let log = try ActionLog(directory: url, access: .readOnly)
  defer { try? log.close() }
  var lines: [String] = []
  try log.forEach { record in
    var payload = Hasher()
    payload.combine(record.payload)
    lines.append("\(record.seq) \(record.typeName) \(record.hash) \(record.payload.count) \(payload.finalize())")
  }
  for info in try log.snapshots() { lines.append("snapshot \(info.seq) \(info.size)") }
  return lines
}

/// The verification report of the log at `url`, read-only.
func verifyLog(_ url: URL) throws -> VerificationReport {
  let log = try ActionLog(directory: url, access: .readOnly)
  defer { try? log.close() }
  return try log.verify()
}


/// One crash-torture configuration.
struct CrashCase: Sendable, CustomTestStringConvertible {
  var durability: String
  var batch: Int
  /// Strings in the state: 0 for a tiny state, thousands to make snapshot writes take time.
  var items: Int
  var snapshotEvery: Int
  /// The longest wait before the kill, in seconds.
  var maxDelay: Double = 0.25
  var testDescription: String { "\(durability), batch \(batch), \(items) items, snapshot every \(snapshotEvery)" }
}

/// Totals of one crash case, printed for `docs/reliability.md`.
struct CrashTally {
  var kills = 0
  var killedDuringSnapshot = 0
  var acknowledged: UInt64 = 0
  var entriesChecked = 0
}

// MARK: - Crash torture

@Suite struct CrashTortureTests {
  static let cases: [CrashCase] = [
    CrashCase(durability: "normal", batch: 1, items: 4_000, snapshotEvery: 4),
    CrashCase(durability: "full", batch: 1, items: 4_000, snapshotEvery: 4),
    CrashCase(durability: "normal", batch: 1_000, items: 0, snapshotEvery: 50, maxDelay: 0.6),
    CrashCase(durability: "full", batch: 5_000, items: 0, snapshotEvery: 50, maxDelay: 0.8),
    CrashCase(durability: "full", batch: 200, items: 4_000, snapshotEvery: 100, maxDelay: 0.6),
  ]

  /// A child sends through a Store and is killed with SIGKILL at a random moment (uniform in time,
  /// independent of its output). After each kill: the chain verifies, sequence numbers run from 1
  /// without a gap, every acknowledged seq is there, and the state equals the fold of the log both
  /// from snapshots and replayed from scratch (a state schema no snapshot has).
  @Test(arguments: cases)
  func killedSendersLoseNothing(_ crash: CrashCase) throws {
    var random = SplitMix64(seed: UInt64(crash.batch * 31 + crash.items + crash.snapshotEvery))
    var dir = try TemporaryDirectory()
    defer { dir.remove() }
    var tally = CrashTally()
    var acknowledged: UInt64 = 0
    for iteration in 0..<ReliabilityRun.crashIterations {
      if iteration > 0, iteration % 25 == 0 {
        // Keep from-scratch replays short in long runs: start a new log now and then.
        dir.remove()
        dir = try TemporaryDirectory()
        acknowledged = 0
      }
      let child = try ChildProcess(
        "chronicle-probe",
        [
          "store-send-state", dir.url.path, "1000000000", crash.durability, "\(crash.batch)", "\(crash.items)",
          "\(crash.snapshotEvery)",
        ])
      let ready = child.readLine()
      #expect(ready == "ready \(acknowledged)", "iteration \(iteration): the reopened log holds every acknowledged entry")
      // From the first acknowledgement on (a slow machine may take long to commit a big batch), a random moment.
      _ = child.output.waitFor(timeout: 120) { $0.count >= 2 || child.output.hasEnded }
      Thread.sleep(forTimeInterval: Double.random(in: 0.01...crash.maxDelay, using: &random))
      child.kill()
      #expect(child.output.hasEnded)
      #expect(child.process.terminationReason == .uncaughtSignal, "iteration \(iteration): the child was killed, not finished")
      for line in child.output.texts.dropFirst() { acknowledged = max(acknowledged, try #require(UInt64(line))) }
      tally.kills += 1

      // The log as found: verifies, gapless from 1, holds every acknowledged seq.
      let report = try verifyLog(dir.url)
      #expect(report.isValid, "iteration \(iteration): \(report.problems)")
      let last = report.range?.upperBound ?? 0
      #expect(last >= acknowledged, "iteration \(iteration): acknowledged \(acknowledged), the log ends at \(last)")
      #expect(report.range == nil || report.range?.lowerBound == 1)
      #expect(report.entriesChecked == Int(last), "iteration \(iteration): no gap")
      tally.entriesChecked += report.entriesChecked
      // Killed between an entry's commit and its due snapshot's commit (a snapshot write in progress)?
      let snapshots = try ActionLog(directory: dir.url, access: .readOnly).snapshots()
      let newestSnapshot = snapshots.filter { $0.schemaVersion == 1 && $0.seq <= last }.map(\.seq).max() ?? 0
      if last - newestSnapshot >= UInt64(crash.snapshotEvery) { tally.killedDuringSnapshot += 1 }

      // Replayed from scratch: no snapshot has this state schema.
      let expected = BigCounter.expected(items: crash.items, count: last)
      let scratch = try Store(
        initialState: BigCounter.initialState(items: crash.items), reducer: BigCounter(), log: .directory(dir.url),
        options: StoreOptions(snapshotEvery: 0, stateSchemaVersion: 1_000 + UInt32(iteration)))
      #expect(scratch.recovery.snapshotSeq == nil)
      #expect(scratch.recovery.entriesReplayed == Int(last))
      #expect(scratch.state == expected, "iteration \(iteration): the fold of the log from scratch")
      try scratch.close()
      // Recovered as the app does (newest usable snapshot, then the tail).
      let recovered = try Store(
        initialState: BigCounter.initialState(items: crash.items), reducer: BigCounter(), log: .directory(dir.url),
        options: StoreOptions(snapshotEvery: crash.snapshotEvery))
      #expect(recovered.lastSeq == last)
      #expect(recovered.state == expected, "iteration \(iteration): recovery from snapshot \(String(describing: recovered.recovery.snapshotSeq))")
      try recovered.close()
      acknowledged = last
      tally.acknowledged = max(tally.acknowledged, acknowledged)
    }
    #expect(tally.entriesChecked > 0)
    print(
      "crash torture [\(crash.testDescription)]: \(tally.kills) kills, \(tally.killedDuringSnapshot) during a due snapshot write, \(tally.entriesChecked) entries verified"
    )
  }
}

// MARK: - Bad input at the engine level

/// Opens a Store on `url` expecting a failure: the error names the path and says why, and nothing on disk changed.
@discardableResult
private func expectStoreOpenFails(
  _ url: URL, mentioning needles: [String], options: StoreOptions = StoreOptions(),
  sourceLocation: SourceLocation = #_sourceLocation
) -> String {
  let before = fileFingerprint(url.path)
  var message = ""
  do {
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(url), options: options)
    try? store.close()
    Issue.record("the store opened", sourceLocation: sourceLocation)
  } catch {
    message = "\(error)"
  }
  for needle in needles {
    #expect(message.contains(needle), "the error says '\(needle)': \(message)", sourceLocation: sourceLocation)
  }
  #expect(fileFingerprint(url.path) == before, "nothing was created or changed", sourceLocation: sourceLocation)
  return message
}

/// A closed Store log of `count` counter actions (snapshots every 10).
private func makeCounterLog(_ url: URL, count: Int = 30, options: StoreOptions = StoreOptions(snapshotEvery: 10))
  throws
{
  let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(url), options: options)
  for n in 1...count { try store.send(n % 7 == 0 ? .set(n) : .increment) }
  try store.close()
}

private func counterValue(after count: Int) -> Int {
  var value = 0
  for n in 1...count { value = n % 7 == 0 ? n : value + 1 }
  return value
}

@Suite struct EngineBadInputTests {
  @Test func garbageEmptyTruncatedAndZeroFilledDataFiles() throws {
    let cases: [(Data, String)] = [
      (Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }), "not an LMDB file"),
      (Data(), "is empty"),
      (Data([0x4C, 0x4D, 0x44, 0x42]), "truncated"),
      (Data(count: 1 << 16), "not an LMDB file"),
    ]
    for (contents, needle) in cases {
      let dir = try TemporaryDirectory()
      defer { dir.remove() }
      try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
      try contents.write(to: dir.url.appendingPathComponent("data.mdb"))
      expectStoreOpenFails(dir.url, mentioning: [dir.url.path, needle])
    }
  }

  @Test func aTruncatedStoreLogIsRefusedAndKeptAsFound() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url, count: 3_000)
    let dataURL = dir.url.appendingPathComponent("data.mdb")
    let whole = try Data(contentsOf: dataURL)
    for cut in [whole.count - 100, 4096 * 3, 4096 + 10] {
      try whole.prefix(cut).write(to: dataURL)
      expectStoreOpenFails(dir.url, mentioning: [dir.url.path, "truncated"])
    }
    // Put back, the log is whole again: nothing was lost by the failed opens.
    try whole.write(to: dataURL)
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    #expect(store.lastSeq == 3_000)
    #expect(store.state.count == counterValue(after: 3_000))
    try store.close()
  }

  @Test func aMissingLockFileLosesNothing() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url)
    try FileManager.default.removeItem(at: dir.url.appendingPathComponent("lock.mdb"))
    let before = try logListing(dir.url)
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    #expect(store.state.count == counterValue(after: 30))
    #expect(FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("lock.mdb").path))
    try store.close()
    #expect(try logListing(dir.url) == before)
  }

  @Test func directoriesThatAreNotLogs() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let notes = dir.url.appendingPathComponent("notes")
    try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
    try Data("mine".utf8).write(to: notes.appendingPathComponent("todo.txt"))
    expectStoreOpenFails(notes, mentioning: [notes.path, "todo.txt"])

    let file = dir.url.appendingPathComponent("file")
    try Data("hello".utf8).write(to: file)
    expectStoreOpenFails(file, mentioning: [file.path, "not a directory"])

    let foreign = dir.url.appendingPathComponent("foreign")
    try FileManager.default.createDirectory(at: foreign, withIntermediateDirectories: true)
    let env = try Environment(path: foreign.path, configuration: .init(maxDatabases: 4))
    let db = try env.openDatabase(named: "other", create: true)
    try env.write { try $0.put([1], forKey: [1], in: db) }
    env.close()
    expectStoreOpenFails(foreign, mentioning: [foreign.path, "no Chronicle databases"])
  }

  @Test func aNewerFormatIsRefusedAndKept() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url)
    try editLog(dir.url) { txn, _, _, meta in try txn.put([0, 0, 0, 3], forKey: Array("format".utf8), in: meta) }
    expectStoreOpenFails(dir.url, mentioning: [dir.url.path, "format 3"])
    try editLog(dir.url) { txn, _, _, meta in try txn.put([0, 0, 0, 1], forKey: Array("format".utf8), in: meta) }
    #expect(try verifyLog(dir.url).isValid)
  }

  @Test func aReadOnlyOrForeignDirectoryIsRefused() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.url.path)
    let logURL = dir.url.appendingPathComponent("log")
    try makeCounterLog(logURL)
    let listing = try logListing(logURL)
    if geteuid() == 0 {
      // Root ignores permissions: run the open as "nobody" in the probe.
      let before = fileFingerprint(logURL.path)
      let denied = try ChildProcess.run("chronicle-probe", ["store-open-as-nobody", logURL.path])
      #expect(denied.status == 3)
      #expect(denied.stdout.contains("permission denied"), "\(denied.stdout)")
      #expect(denied.stdout.contains(logURL.path), "\(denied.stdout)")
      // Nobody's own log, but its directory read-only (0500): writing is refused.
      for name in (try FileManager.default.contentsOfDirectory(atPath: logURL.path)) + [""] {
        #expect(chown(logURL.path + (name.isEmpty ? "" : "/" + name), 65_534, 65_534) == 0)
      }
      try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: logURL.path)
      let readOnly = try ChildProcess.run("chronicle-probe", ["store-open-as-nobody", logURL.path])
      #expect(readOnly.status == 3)
      #expect(readOnly.stdout.contains("permission denied writing to \(logURL.path)"), "\(readOnly.stdout)")
      try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: logURL.path)
      #expect(fileFingerprint(logURL.path) == before)
    } else {
      try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: logURL.path)
      expectStoreOpenFails(logURL, mentioning: ["permission denied", logURL.path])
      try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: logURL.path)
    }
    #expect(try logListing(logURL) == listing)
  }

  /// `maxLogSize` at the initial map size (64 MiB): the ceiling is reached after about 64 MiB of sends.
  @Test func theMapCeilingFailsTheSendClearlyAndLosesNothing() throws {
    try checkMapCeiling(64 << 20)
  }

  /// `maxLogSize` below the initial map size must hold too.
  @Test
  func aSmallMapCeilingFailsTheSendClearlyAndLosesNothing() throws {
    try checkMapCeiling(2 << 20)
  }

  private func checkMapCeiling(_ ceiling: Int) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let options = StoreOptions(snapshotEvery: 0, maxLogSize: ceiling)
    let store = try Store(initialState: Blobs.State(), reducer: Blobs(), log: .directory(dir.url), options: options)
    let big = Data(repeating: 0xAB, count: 64 << 10)
    var sent = 0
    var failure: ChronicleError?
    // Twice the ceiling in sends of 64 KiB: the ceiling must stop them before.
    for _ in 0..<(2 * ceiling / (64 << 10)) {
      do {
        try store.send(.put(big))
        sent += 1
      } catch {
        failure = error as? ChronicleError
        break
      }
    }
    let message = failure?.description ?? "no failure"
    #expect(message.contains("ceiling"), "\(message)")
    #expect(message.contains(dir.url.standardizedFileURL.path), "\(message)")
    #expect(sent > 0)
    // Nothing changed by the failed send; reads still work; the next big send fails the same way.
    #expect(store.lastSeq == UInt64(sent))
    #expect(store.state == Blobs.State(count: sent, bytes: sent * big.count))
    #expect(try store.history.count == sent)
    #expect(throws: ChronicleError.self) { try store.send(.put(big)) }
    #expect(store.lastSeq == UInt64(sent))
    try? store.close()  // the closing snapshot may not fit either; the log closes all the same
    let listing = try logListing(dir.url).filter { !$0.hasPrefix("snapshot") }
    #expect(listing.count == sent)
    let reopened = try Store(initialState: Blobs.State(), reducer: Blobs(), log: .directory(dir.url), options: options)
    #expect(reopened.state == Blobs.State(count: sent, bytes: sent * big.count))
    _ = try? reopened.send(.put(Data([1, 2, 3])))  // may fit or fail cleanly
    try? reopened.close()
    #expect(try verifyLog(dir.url).isValid)
    print("map ceiling \(ceiling >> 20) MiB: \(sent) sends of 64 KiB committed, then: \(message)")
  }

  @Test func twoWritersAcrossProcesses() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url)
    let listing = try logListing(dir.url)
    // Another process holds the log: this Store is refused at once.
    let holder = try ChildProcess("chronicle-log-probe", ["hold-writer", dir.url.path], input: true)
    #expect(holder.readLine() == "ready")
    #expect {
      _ = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    } throws: { error in
      guard case ChronicleError.logLocked(let path) = error else { return false }
      return path == dir.url.standardizedFileURL.path
    }
    #expect(holder.wait() == 0)
    // This Store holds it: another process is refused.
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    let other = try ChildProcess.run("chronicle-log-probe", ["try-writer", dir.url.path])
    #expect(other.status == 3)
    #expect(other.stdout.contains("locked"), "\(other.stdout)")
    try store.close()
    #expect(try logListing(dir.url) == listing)
  }

  @Test func aPayloadThatDoesNotDecodeStopsTheOpenNamingTheSeq() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url, count: 12)
    let log = try ActionLog(directory: dir.url)
    try log.append(NewEntry(typeName: "increment", codec: .cbor, payload: [0xFF, 0x00, 0x13]))
    try log.append(NewEntry(typeName: "set", codec: .json, payload: Array("{\"set\":".utf8)))
    try log.close()
    let before = try logListing(dir.url)
    let fingerprint = fileFingerprint(dir.url.path)
    #expect {
      _ = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    } throws: { error in
      guard case ChronicleError.undecodableEntry(let seq, let type, _) = error else { return false }
      return seq == 13 && type == "increment"
    }
    #expect(fileFingerprint(dir.url.path)["data.mdb"] == fingerprint["data.mdb"], "a failed open writes nothing")
    #expect(try logListing(dir.url) == before)
    #expect(try verifyLog(dir.url).isValid, "the entries are intact; only the app cannot read them")
  }

  @Test func aTamperedEntryByteIsNamedByVerify() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url)
    try editLog(dir.url) { txn, entries, _, _ in
      var value = try #require(try txn.get(forKey: seqKey(17), in: entries))
      value[12] ^= 0x10  // a timestamp bit
      try txn.put(value, forKey: seqKey(17), in: entries)
    }
    let report = try verifyLog(dir.url)
    #expect(report.firstBadSeq == 17)
    #expect(report.problems.map(\.description) == ["entry 17: hash mismatch: the entry's bytes or its predecessor's hash were changed"])
  }

  @Test func aTamperedSnapshotFallsBackWithAWarningAndVerifyReportsIt() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url)  // snapshots at 10, 20, 30
    try editLog(dir.url) { txn, _, snapshots, _ in
      var value = try #require(try txn.get(forKey: seqKey(30), in: snapshots))
      value[61] ^= 0x01  // inside the state
      try txn.put(value, forKey: seqKey(30), in: snapshots)
    }
    let report = try verifyLog(dir.url)
    #expect(report.problems.map(\.location) == [.snapshot(30)])
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: StoreOptions(snapshotEvery: 10))
    #expect(store.state.count == counterValue(after: 30))
    #expect(store.recovery.snapshotSeq == 20)
    #expect(store.recovery.entriesReplayed == 10)
    #expect(store.recovery.warnings.count == 1)
    #expect(store.recovery.warnings.first?.contains("snapshot at 30") == true, "\(store.recovery.warnings)")
    #expect(store.recovery.warnings.first?.contains("checksum") == true, "\(store.recovery.warnings)")
    try store.close()
  }
}

// MARK: - Security

@Suite struct SecurityTests {
  @Test func storeLogsAreOwnerOnlyEvenWithUmaskZero() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.url.appendingPathComponent("nested/log")
    let result = try ChildProcess.run("chronicle-probe", ["store-umask-zero", logURL.path])
    #expect(result.status == 0)
    #expect(result.stdout == "done\n")
    let inMemory = try Store(initialState: Counter.State(), reducer: Counter(), log: .inMemory)
    try inMemory.send(.increment)
    for base in [logURL.path, inMemory.logPath] {
      for (name, mode) in [("", 0o700), ("/data.mdb", 0o600), ("/lock.mdb", 0o600), ("/chronicle.lock", 0o600)] {
        let attributes = try FileManager.default.attributesOfItem(atPath: base + name)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == mode, "\(base)\(name)")
      }
    }
    try inMemory.close()
  }

  enum Tamper: String, CaseIterable, Sendable {
    case changedPayload, changedHash, removed, inserted, reordered, renumbered
    /// The seq verification must name.
    var firstBadSeq: UInt64 {
      switch self {
      case .changedPayload: 14
      case .changedHash: 14
      case .removed: 12
      case .inserted: 8
      case .reordered: 3
      case .renumbered: 25
      }
    }
  }

  /// Entries changed, removed, inserted, reordered or renumbered in a Store's log: verification names
  /// the first bad seq; reopening the store either fails naming it or opens (recovery trusts intact
  /// snapshots and does not recompute hashes: see docs/reliability.md).
  @Test(arguments: Tamper.allCases)
  func theChainCatchesTamperingAtTheStoreLevel(_ tamper: Tamper) throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url)  // 14 is `.set(14)`
    try editLog(dir.url) { txn, entries, _, _ in
      func get(_ seq: UInt64) throws -> [UInt8] { try #require(try txn.get(forKey: seqKey(seq), in: entries)) }
      switch tamper {
      case .changedPayload:
        var value = try get(14)
        value[value.count - 33] ^= 0x03  // the CBOR integer of `.set(14)`: now `.set(13)`
        try txn.put(value, forKey: seqKey(14), in: entries)
      case .changedHash:
        var value = try get(14)
        value[value.count - 1] ^= 0x80
        try txn.put(value, forKey: seqKey(14), in: entries)
      case .removed:
        _ = try txn.delete(forKey: seqKey(12), in: entries)
      case .inserted:
        for seq in (8...30).reversed() { try txn.put(try get(UInt64(seq)), forKey: seqKey(UInt64(seq + 1)), in: entries) }
        try txn.put(try get(7), forKey: seqKey(8), in: entries)
      case .reordered:
        let (three, four) = (try get(3), try get(4))
        try txn.put(four, forKey: seqKey(3), in: entries)
        try txn.put(three, forKey: seqKey(4), in: entries)
      case .renumbered:
        try txn.put(try get(30), forKey: seqKey(31), in: entries)
        for seq in UInt64(25)...30 { try txn.put(try get(seq + 1), forKey: seqKey(seq), in: entries) }
        _ = try txn.delete(forKey: seqKey(31), in: entries)
        _ = try txn.delete(forKey: seqKey(30), in: entries)
      }
    }
    let report = try verifyLog(dir.url)
    #expect(!report.isValid)
    #expect(report.firstBadSeq == tamper.firstBadSeq, "\(report.problems)")
    // Opening the store: a clear error naming an entry, or a store; never a crash.
    for stateSchema: UInt32 in [1, 77] {
      do {
        let store = try Store(
          initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url),
          options: StoreOptions(snapshotEvery: 0, stateSchemaVersion: stateSchema))
        try? store.close()
      } catch {
        #expect("\(error)".contains("entry"), "\(tamper) schema \(stateSchema): \(error)")
      }
    }
  }

  /// What the chain alone cannot see, and what catches it: dropping the newest entries, or a
  /// whole chain rewritten by someone who can write the file, verifies; only a head hash
  /// recorded elsewhere (an external checkpoint) shows it.
  @Test func tailTruncationAndAWholeRewriteNeedAnExternalCheckpoint() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url, options: StoreOptions(snapshotEvery: 0))
    let checkpoint = try verifyLog(dir.url)
    // Drop the newest entries and the closing snapshot that would betray them: the tree stores the
    // hashes of 16-entry subtrees, so the cut reaches into one (entries 1…16).
    try editLog(dir.url) { txn, entries, snapshots, _ in
      for seq in UInt64(14)...30 { _ = try txn.delete(forKey: seqKey(seq), in: entries) }
      try txn.empty(snapshots)
    }
    let cut = try verifyLog(dir.url)
    #expect(
      cut.problems.map(\.description)
        == ["entry 14: the Merkle tree's stored hashes cover 16 entries but the log ends at 13: entries 14…16 at least were removed"],
      "the stored Merkle tree still covers the removed entries")
    // Remove their tree hashes too: now the log alone cannot tell.
    try editLog(dir.url) { txn, _, _, _ in
      let tree = try txn.openDatabase(named: "tree")
      try txn.deleteSubtrees(beyond: 13, in: tree)
    }
    let truncated = try verifyLog(dir.url)
    #expect(truncated.isValid, "the chain alone cannot tell a shorter log from a truncated one")
    #expect(truncated.head != checkpoint.head, "the recorded head hash does")

    // A forged log written from scratch with the same actions but one changed amount.
    let forged = try TemporaryDirectory()
    defer { forged.remove() }
    let original = try ActionLog(directory: dir.url, access: .readOnly)
    let records = try original.records(in: 1...13)
    try original.close()
    let writer = try ActionLog(directory: forged.url)
    for record in records {
      let payload = record.seq == 7 ? try PayloadCodec.cbor.encode(Counter.Action.set(1_000)) : record.payload
      try writer.append(
        NewEntry(
          kind: record.kind, flags: record.flags, typeName: record.typeName, metadata: record.metadata,
          codec: record.codec, schemaVersion: record.schemaVersion, payload: payload, timestamp: record.timestamp))
    }
    try writer.close()
    let rewritten = try verifyLog(forged.url)
    #expect(rewritten.isValid, "a rewritten chain is a valid chain")
    #expect(rewritten.head != truncated.head, "only the head recorded elsewhere exposes it")
  }

  /// Snapshots are a cache checked against the chain (their seq and chain hash) and by a checksum, which
  /// anyone who can write the file can recompute: a forged but well-formed snapshot is used by recovery.
  /// A replay from scratch (another state schema) exposes it.
  @Test func aForgedWellFormedSnapshotIsExposedByAReplayFromScratch() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try makeCounterLog(dir.url, options: StoreOptions(snapshotEvery: 0))  // closing snapshot at 30
    let log = try ActionLog(directory: dir.url)
    try log.writeSnapshot(
      at: 30, state: try PayloadCodec.cbor.encode(Counter.State(count: 1_000_000)), codec: .cbor, schemaVersion: 1)
    try log.close()
    #expect(try verifyLog(dir.url).isValid, "the forged snapshot is well-formed and tied to entry 30")
    let trusting = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    #expect(trusting.state.count == 1_000_000)
    try trusting.close()
    let scratch = try Store(
      initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url),
      options: StoreOptions(stateSchemaVersion: 2))
    #expect(scratch.recovery.snapshotSeq == nil)
    #expect(scratch.state.count == counterValue(after: 30))
    try scratch.close()
  }
}
