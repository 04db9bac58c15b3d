import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

/// Random damage to a Store's log on disk, then recovery and verification: never a crash;
/// a failed open names what it refused and writes nothing; every damaged entry or snapshot
/// is reported by verification.
@Suite struct StoreRecoveryFuzzTests {
  /// Damage of one stored item.
  enum Damage: CaseIterable {
    case flipBit, setByte, truncate, extend, replace, lengthField, deleteKey, junkKey
  }

  static let iterations = 250 * ReliabilityRun.fuzzScale

  @Test func randomDamageNeverCrashesRecoveryAndIsAlwaysReported() throws {
    let base = try TemporaryDirectory()
    defer { base.remove() }
    do {
      let store = try Store(
        initialState: Counter.State(), reducer: Counter(), log: .directory(base.url),
        options: StoreOptions(snapshotEvery: 10))
      for n in 1...40 {
        let action: Counter.Action = n % 9 == 0 ? .reset : n % 5 == 0 ? .set(n * 1_000) : n % 7 == 0 ? .decrement : .increment
        try store.send(action, metadata: n % 3 == 0 ? ["who": "fuzz \(n)"] : [:])
      }
      try store.close()  // snapshots at 20, 30, 40
    }
    let pristine = try Data(contentsOf: base.url.appendingPathComponent("data.mdb"))
    var random = SplitMix64(seed: 0xC4_0AC1E)
    var opened = 0
    var refused = 0
    var reported = 0
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    for iteration in 0..<Self.iterations {
      try? FileManager.default.removeItem(at: dir.url)
      try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
      try pristine.write(to: dir.url.appendingPathComponent("data.mdb"))
      let damage = Damage.allCases.randomElement(using: &random)!
      let inSnapshots = Int.random(in: 0..<4, using: &random) == 0
      let seq = inSnapshots ? UInt64([20, 30, 40].randomElement(using: &random)!) : UInt64.random(in: 1...40, using: &random)
      var changed = false
      try editLog(dir.url) { txn, entries, snapshots, _ in
        let db = inSnapshots ? snapshots : entries
        let original = try #require(try txn.get(forKey: seqKey(seq), in: db))
        var value = original
        switch damage {
        case .flipBit:
          value[Int.random(in: 0..<value.count, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case .setByte:
          value[Int.random(in: 0..<value.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
        case .truncate:
          value.removeLast(Int.random(in: 1...value.count, using: &random))
        case .extend:
          value += (0..<Int.random(in: 1...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case .replace:
          value = (0..<Int.random(in: 0...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case .lengthField:
          // Entry: type name, metadata count, payload length (16…23); snapshot: state length (56…59).
          let offset = inSnapshots ? Int.random(in: 56...59, using: &random) : Int.random(in: 16...23, using: &random)
          value[offset] = [0x00, 0xFF, 0x7F, 0x80].randomElement(using: &random)!
        case .deleteKey:
          _ = try txn.delete(forKey: seqKey(seq), in: db)
          changed = true
          return
        case .junkKey:
          let junk = (0..<Int.random(in: 1...12, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
          try txn.put(value, forKey: junk, in: db)
          changed = true
          return
        }
        // An emptied value is a deleted key; a deleted snapshot costs a longer replay and is not a problem.
        changed = value != original && !(inSnapshots && value.isEmpty)
        if value.isEmpty { _ = try txn.delete(forKey: seqKey(seq), in: db) } else { try txn.put(value, forKey: seqKey(seq), in: db) }
      }
      let before = try Data(contentsOf: dir.url.appendingPathComponent("data.mdb"))
      let what = "iteration \(iteration): \(damage) of \(inSnapshots ? "snapshot" : "entry") \(seq)"

      // Verification reports damage to any entry, and any damaged snapshot value.
      var report: VerificationReport?
      do { report = try verifyLog(dir.url) } catch {
        #expect("\(error)".contains(dir.url.path), "\(what): \(error)")
      }
      if let report, changed, !(inSnapshots && damage == .deleteKey) {
        #expect(!report.isValid, "\(what): verification saw nothing")
        if !report.isValid { reported += 1 }
      }

      // Recovery: from snapshots, or from scratch.
      let options = StoreOptions(snapshotEvery: 0, stateSchemaVersion: iteration % 2 == 0 ? 1 : 2)
      do {
        let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url), options: options)
        _ = store.state
        _ = try? store.history
        try? store.close()
        opened += 1
      } catch {
        refused += 1
        let message = "\(error)"
        #expect(message.contains("entry") || message.contains(dir.url.path), "\(what): \(message)")
        #expect(
          try Data(contentsOf: dir.url.appendingPathComponent("data.mdb")) == before, "\(what): a failed open writes nothing")
      }
    }
    print("store recovery fuzz: \(Self.iterations) damaged logs; opened \(opened), refused \(refused), verify reported \(reported)")
    #expect(opened + refused == Self.iterations)
  }
}
