import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

// Seeded fuzzing of the decoders the CBOR suite does not reach: entry values (in memory and
// through the log's readers), snapshot values, JSON rendering of payloads, and export files.
// Every input must be refused with an error or accepted consistently: never a crash.
// CHRONICLE_HEAVY=1 multiplies the counts by 20; `docs/reliability.md` records them.

private let fuzzScale = ProcessInfo.processInfo.environment["CHRONICLE_HEAVY"] == "1" ? 20 : 1

extension SplitMix64 {
  /// `count` random bytes.
  fileprivate mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
}

/// SHA-256 (FIPS 180-4), so the fuzzer can give mutated snapshots a valid checksum and reach the parser behind it.
private enum TestSHA256 {
  private static let k: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  static func hash(_ message: [UInt8]) -> [UInt8] {
    var h: [UInt32] = [
      0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    var data = message + [0x80]
    while data.count % 64 != 56 { data.append(0) }
    data += withUnsafeBytes(of: (UInt64(message.count) * 8).bigEndian) { Array($0) }
    var w = [UInt32](repeating: 0, count: 64)
    for chunk in stride(from: 0, to: data.count, by: 64) {
      for i in 0..<16 {
        w[i] = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(data[chunk + 4 * i + $1]) }
      }
      for i in 16..<64 {
        let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
        let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
        w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
      }
      var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
      for i in 0..<64 {
        let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
        let choice = (e & f) ^ (~e & g)
        let t1 = hh &+ s1 &+ choice &+ k[i] &+ w[i]
        let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
        let majority = (a & b) ^ (a & c) ^ (b & c)
        let t2 = s0 &+ majority
        (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
      }
      for (i, value) in [a, b, c, d, e, f, g, hh].enumerated() { h[i] = h[i] &+ value }
    }
    return h.flatMap { word in withUnsafeBytes(of: word.bigEndian) { Array($0) } }
  }
}

extension UInt32 {
  fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}

/// Mutants of hand-written CBOR: `PayloadCodec` (hand-written first, then `Codable`) never crashes, and reads
/// what the hand-written reader reads, or else what `Codable` reads.
@Test func payloadCodecReadsMutantsOfHandWrittenCBOR() {
  var random = SplitMix64(seed: 0xC0DA_B1E)
  let seeds = LedgerMove.examples.map(\.cborBytes)
  var accepted = 0
  for _ in 0..<(4_000 * fuzzScale) {
    let input = mutate(seeds.randomElement(using: &random)!, &random)
    let handWritten = input.withUnsafeBytes { LedgerMove(cborBytes: $0) }
    let codable = try? CBORDecoder().decode(LedgerMove.self, from: input)
    let decoded = try? PayloadCodec.cbor.decode(LedgerMove.self, from: input)
    if decoded != nil { accepted += 1 }
    #expect(decoded == (handWritten ?? codable), "PayloadCodec reads \(String(describing: decoded)) from \(input)")
  }
  #expect(accepted > 50, "too few mutants decode to exercise the comparison: \(accepted)")
}

/// Mutations shared by the fuzzers: bit flips, byte sets, interesting values in length fields, cuts, growth, splices.
private func mutate(_ input: [UInt8], _ random: inout SplitMix64, lengthOffsets: [Int] = []) -> [UInt8] {
  var value = input
  let rounds = Int.random(in: 1...4, using: &random)
  for _ in 0..<rounds {
    switch Int.random(in: 0..<8, using: &random) {
    case 0 where !value.isEmpty:
      value[Int.random(in: 0..<value.count, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
    case 1 where !value.isEmpty:
      value[Int.random(in: 0..<value.count, using: &random)] = [0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE].randomElement(using: &random)!
    case 2 where !lengthOffsets.isEmpty:
      let offset = lengthOffsets.randomElement(using: &random)!
      if offset < value.count { value[offset] = [0x00, 0xFF, 0x7F, 0x80, 0x01].randomElement(using: &random)! }
    case 3 where !value.isEmpty:
      value.removeLast(Int.random(in: 1...min(value.count, 40), using: &random))
    case 4:
      value += random.bytes(Int.random(in: 1...40, using: &random))
    case 5 where value.count > 2:
      let from = Int.random(in: 0..<value.count, using: &random)
      let to = Int.random(in: 0..<value.count, using: &random)
      value.insert(contentsOf: value[min(from, to)..<max(from, to)], at: Int.random(in: 0...value.count, using: &random))
    case 6 where value.count > 2:
      let start = Int.random(in: 0..<value.count, using: &random)
      value.removeSubrange(start..<min(value.count, start + Int.random(in: 1...16, using: &random)))
    default:
      if !value.isEmpty { value[Int.random(in: 0..<value.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
    }
  }
  return value
}

/// Valid entry values of many shapes (hash bytes random: parsing does not check them).
private func seedEntries(_ random: inout SplitMix64) throws -> [[UInt8]] {
  var seeds: [[UInt8]] = []
  let samples: [NewEntry] = [
    try NewEntry(encoding: Sample.make(3), typeName: "sample", metadata: ["user": "ada", "why": "audit"], codec: .cbor),
    try NewEntry(encoding: Sample.make(4), typeName: "sample", codec: .json),
    NewEntry(kind: .marker, typeName: "", codec: .json, payload: []),
    try NewEntry(kind: .undo, flags: [.notUndoable], encoding: ["target": 3], typeName: "undo", codec: .cbor),
    NewEntry(typeName: "ünïcode ✓", metadata: ["k": "", "": "v"], codec: .cbor, payload: random.bytes(300)),
  ]
  for entry in samples {
    var writer = ByteWriter()
    try EntryFormat.encodeBody(entry, timestamp: 1_700_000_000_000_000, into: &writer)
    writer.append(random.bytes(32))
    seeds.append(writer.bytes)
  }
  return seeds
}

@Suite struct DecoderFuzzTests {
  /// Mutated entry values straight into the parser: refused with a `FormatError`, or parsed into fields
  /// whose lengths add up to the value's length exactly.
  @Test func entryValuesInMemory() throws {
    var random = SplitMix64(seed: 0xE17_0001)
    let seeds = try seedEntries(&random)
    let count = 100_000 * fuzzScale
    var accepted = 0
    for n in 0..<count {
      let input = n % 10 == 9 ? random.bytes(Int.random(in: 0...120, using: &random))
        : mutate(seeds[n % seeds.count], &random, lengthOffsets: Array(16..<24))
      do {
        let (body, fields) = try input.withUnsafeBytes { buffer in
          let view = try EntryFormat.parse(buffer, seq: 1)
          return (view.body.count, view.typeNameBytes.count + view.metadataBytes.count + view.payload.count)
        }
        #expect(body + 32 == input.count)
        #expect(24 + fields + 32 == input.count)
        _ = try? input.withUnsafeBytes { try EntryFormat.storedEntry(seq: 1, value: $0) }
        accepted += 1
      } catch {
        #expect(error is FormatError, "\(error)")
      }
    }
    print("entry value fuzz: \(count) inputs, \(accepted) parsed")
  }

  /// Mutated entry values (and junk keys) written into a real log's `entries` database, then read by every
  /// reader: `record(at:)`, `records(in:)`, `forEach`, `scan` (the replay path), `bounds`, `head`, `verify`.
  /// Each refuses with a `LogError` naming the path, or reads; `verify` names every damaged seq.
  @Test func entryValuesThroughTheLog() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var random = SplitMix64(seed: 0xE17_0002)
    let log = try ActionLog(directory: dir.url)
    for n in 1...20 {
      try log.append(try NewEntry(encoding: Sample.make(n), typeName: "s\(n)", metadata: ["n": "\(n)"], codec: n % 2 == 0 ? .cbor : .json))
    }
    try log.close()
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 4, flags: [.noSync]))
    let originals = try env.read { txn in
      let entries = try txn.openDatabase(named: "entries")
      return try (1...20).map { try #require(try txn.get(forKey: key(UInt64($0)), in: entries)) }
    }
    env.close()

    let rounds = 300 * fuzzScale
    var junk: [[UInt8]] = []
    var inputs = 0
    var missed = 0
    for _ in 0..<rounds {
      var stored: [UInt64: [UInt8]] = [:]
      let restore = junk
      junk = []
      let writer = try Environment(path: dir.path, configuration: .init(maxDatabases: 4, flags: [.noSync]))
      let entries = try writer.openDatabase(named: "entries")
      try writer.write { txn in
        for key in restore { _ = try txn.delete(forKey: key, in: entries) }
        for (index, value) in originals.enumerated() { try txn.put(value, forKey: key(UInt64(index + 1)), in: entries) }
        for _ in 0..<Int.random(in: 1...4, using: &random) {
          let seq = UInt64.random(in: 1...20, using: &random)
          let value = mutate(originals[Int(seq) - 1], &random, lengthOffsets: Array(16..<24))
          inputs += 1
          if value.isEmpty { continue }
          stored[seq] = value
          try txn.put(value, forKey: key(seq), in: entries)
        }
        if Int.random(in: 0..<5, using: &random) == 0 {
          let bad = random.bytes(Int.random(in: 1...12, using: &random))
          if bad.count != 8 || (bad.first ?? 0) > 0 {
            junk.append(bad)
            try txn.put(random.bytes(Int.random(in: 0...80, using: &random)), forKey: bad, in: entries)
          }
        }
      }
      writer.close()
      let damaged = Set(stored.filter { $0.value != originals[Int($0.key) - 1] }.keys)

      let reader = try ActionLog(directory: dir.url, access: .readOnly)
      for seq in UInt64(1)...21 {
        do { _ = try reader.record(at: seq) } catch { #expect("\(error)".contains(dir.path)) }
      }
      do { _ = try reader.records(in: 1...20) } catch { #expect("\(error)".contains(dir.path)) }
      do { try reader.forEach(reverse: true) { _ in } } catch { #expect("\(error)".contains(dir.path)) }
      do { try reader.scan(in: 1...20) { _ in } } catch { #expect("\(error)".contains(dir.path)) }
      _ = try? reader.bounds()
      _ = try? reader.head()
      let report = try reader.verify()
      let named = Set(report.problems.compactMap { problem -> UInt64? in
        if case .entry(let seq) = problem.location { return seq }
        return nil
      })
      if !damaged.isSubset(of: named) { missed += 1 }
      #expect(damaged.isSubset(of: named), "damaged \(damaged.sorted()), verify named \(named.sorted())")
      if !damaged.isEmpty || !junk.isEmpty { #expect(!report.isValid) }
      try reader.close()
    }
    #expect(missed == 0)
    print("entry values through the log: \(rounds) rounds, \(inputs) mutated values")
  }

  /// Mutated snapshots: with their checksum left as is (refused by the checksum), and with a recomputed
  /// checksum (reaching the layout parser). Through the log: `snapshot(at:)`, `snapshots()`,
  /// `latestSnapshot()` and `verify()` refuse or skip them, never crash.
  @Test func snapshotValues() throws {
    #expect(TestSHA256.hash(Array("abc".utf8)).map { String(format: "%02x", $0) }.joined()
      == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    var random = SplitMix64(seed: 0x5AA_0003)
    let seeds = try [
      Snapshot(seq: 7, timestamp: 5, codec: .cbor, schemaVersion: 1, chainHash: random.bytes(32), state: random.bytes(40), auxiliary: []),
      Snapshot(seq: 7, timestamp: -1, codec: .json, schemaVersion: 9, chainHash: random.bytes(32),
               state: Array("{\"count\":3}".utf8), auxiliary: random.bytes(20)),
    ].map { try SnapshotFormat.encode($0) }
    let count = 50_000 * fuzzScale
    var parsedWithFixedChecksum = 0
    for n in 0..<count {
      var input = mutate(seeds[n % 2], &random, lengthOffsets: [1, 56, 57, 58, 59])
      let fixChecksum = n % 2 == 1 && input.count >= 96
      if fixChecksum {
        let body = Array(input.dropLast(32))
        input = body + TestSHA256.hash(body)
      }
      do {
        let snapshot = try input.withUnsafeBytes { try SnapshotFormat.decode(seq: 7, value: $0) }
        #expect(60 + snapshot.state.count + 4 + snapshot.auxiliary.count + 32 == input.count)
        #expect(fixChecksum || input == seeds[n % 2], "a changed snapshot passed its checksum")
        if fixChecksum { parsedWithFixedChecksum += 1 }
      } catch {
        #expect(error is FormatError, "\(error)")
      }
    }

    // Through the log.
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    for n in 1...10 { try log.append(try NewEntry(encoding: n, typeName: "n", codec: .cbor)) }
    for seq in [3, 6, 9] as [UInt64] { try log.writeSnapshot(at: seq, state: random.bytes(50), codec: .cbor, schemaVersion: 1) }
    try log.close()
    let pristine = try Environment(path: dir.path, configuration: .init(maxDatabases: 4, flags: [.noSync]))
    let originals = try pristine.read { txn in
      let snapshots = try txn.openDatabase(named: "snapshots")
      return try ([3, 6, 9] as [UInt64]).map { try #require(try txn.get(forKey: key($0), in: snapshots)) }
    }
    pristine.close()
    let rounds = 100 * fuzzScale
    for _ in 0..<rounds {
      // Raw LMDB writes: good snapshots back, then one damaged.
      let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 4, flags: [.noSync]))
      let snapshots = try env.openDatabase(named: "snapshots")
      let index = Int.random(in: 0..<3, using: &random)
      try env.write { txn in
        for (offset, value) in originals.enumerated() { try txn.put(value, forKey: key(UInt64(3 * offset + 3)), in: snapshots) }
        var value = mutate(originals[index], &random, lengthOffsets: [1, 8, 15, 56, 57, 58, 59])
        if Bool.random(using: &random), value.count >= 96 { value = Array(value.dropLast(32)) + TestSHA256.hash(Array(value.dropLast(32))) }
        if !value.isEmpty { try txn.put(value, forKey: key(UInt64(3 * index + 3)), in: snapshots) }
      }
      env.close()
      let reader = try ActionLog(directory: dir.url, access: .readOnly)
      for seq in [3, 6, 9] as [UInt64] {
        do { _ = try reader.snapshot(at: seq) } catch { #expect("\(error)".contains(dir.path)) }
      }
      _ = try reader.snapshots()
      let latest = try reader.latestSnapshot()
      #expect(latest.snapshot != nil, "the undamaged snapshots are still found")
      _ = try reader.verify()
      try reader.close()
    }
    print("snapshot fuzz: \(count) values in memory (\(parsedWithFixedChecksum) parsed after a recomputed checksum), \(rounds) through the log")
  }

  /// `renderJSON` (what logtool shows) on garbage and mutated payloads of both codecs: an error, or JSON text
  /// that a JSON parser reads back.
  @Test func payloadRenderingOfGarbage() throws {
    var random = SplitMix64(seed: 0x750_0004)
    let jsonSeeds = try (0..<4).map { try PayloadCodec.json.encode(Sample.make($0)) }
    let cborSeeds = try (0..<4).map { try PayloadCodec.cbor.encode(Sample.make($0)) }
    let count = 20_000 * fuzzScale
    var rendered = 0
    for n in 0..<count {
      let codec: PayloadCodec = n % 2 == 0 ? .json : .cbor
      let seeds = codec == .json ? jsonSeeds : cborSeeds
      let input = n % 8 == 7 ? random.bytes(Int.random(in: 0...64, using: &random)) : mutate(seeds[n % 4], &random)
      guard let text = try? codec.renderJSON(input, prettyPrinted: n % 3 == 0) else { continue }
      rendered += 1
      let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
      #expect(parsed != nil, "\(codec) rendered text that is not JSON: \(text.prefix(200))")
    }
    print("payload rendering fuzz: \(count) inputs, \(rendered) rendered, all valid JSON")
  }

  /// Mutated export files (bytes flipped, lines dropped, duplicated, swapped, cut): `checkExport` refuses
  /// them with an error or accepts; an import of a refused file fails and leaves nothing behind; an
  /// accepted one imports into a log that verifies.
  @Test func exportFilesThatWereTamperedWith() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    var random = SplitMix64(seed: 0xE0_0005)
    let log = try ActionLog(directory: dir.child("log"), options: .init(appID: "fuzz"))
    for n in 1...12 {
      try log.append(try NewEntry(encoding: Sample.make(n), typeName: "s", metadata: ["n": "\(n)"], codec: n % 3 == 0 ? .json : .cbor))
    }
    try log.writeSnapshot(at: 6, state: Array("six".utf8), codec: .json, schemaVersion: 1)
    try log.close()
    let reader = try ActionLog(directory: dir.child("log"), access: .readOnly)
    let exportURL = dir.child("export.jsonl")
    try reader.export(to: exportURL)
    let originalHead = try reader.verify().head
    try reader.close()
    let original = [UInt8](try Data(contentsOf: exportURL))
    let lines = original.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)

    let count = 400 * fuzzScale
    var accepted = 0
    var acceptedChanged = 0
    var imported = 0
    let file = dir.child("mutated.jsonl")
    for n in 0..<count {
      var mutatedLines = lines
      switch n % 5 {
      case 0:
        let index = Int.random(in: 0..<mutatedLines.count, using: &random)
        mutatedLines[index] = mutate(mutatedLines[index], &random)
      case 1:
        mutatedLines.remove(at: Int.random(in: 0..<(mutatedLines.count - 1), using: &random))
      case 2:
        let index = Int.random(in: 0..<(mutatedLines.count - 1), using: &random)
        mutatedLines.insert(mutatedLines[index], at: index)
      case 3:
        let a = Int.random(in: 0..<(mutatedLines.count - 1), using: &random)
        let b = Int.random(in: 0..<(mutatedLines.count - 1), using: &random)
        mutatedLines.swapAt(a, b)
      default:
        let joined = Array(mutatedLines.joined(separator: [UInt8(ascii: "\n")]))
        mutatedLines = [Array(joined.prefix(Int.random(in: 0..<joined.count, using: &random)))]
      }
      let bytes = Array(mutatedLines.joined(separator: [UInt8(ascii: "\n")]))
      try Data(bytes).write(to: file)
      let destination = dir.child("imported-\(n)")
      do {
        try ActionLog.checkExport(at: file)
        accepted += 1
      } catch {
        #expect(!"\(error)".isEmpty)
        if n % 4 == 0 {
          #expect(throws: (any Error).self) { try ActionLog.importLog(from: file, into: destination) }
          #expect(!FileManager.default.fileExists(atPath: destination.path), "a failed import leaves nothing")
        }
        continue
      }
      if bytes != original { acceptedChanged += 1 }
      try ActionLog.importLog(from: file, into: destination)
      let check = try ActionLog(directory: destination, access: .readOnly)
      let report = try check.verify()
      #expect(report.isValid)
      #expect(report.head == originalHead, "an accepted export rebuilds the exported chain exactly")
      #expect(try check.count() == 12)
      try check.close()
      try FileManager.default.removeItem(at: destination)
      imported += 1
    }
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".imported") }
    #expect(leftovers.isEmpty, "\(leftovers)")
    print("export fuzz: \(count) mutated exports, \(accepted) accepted by checkExport (\(acceptedChanged) of them changed) and imported (\(imported)), the rest refused")
  }
}

private func key(_ seq: UInt64) -> [UInt8] { withUnsafeBytes(of: seq.bigEndian) { Array($0) } }
