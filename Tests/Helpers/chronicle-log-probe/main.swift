// A helper process for the log's tests: it opens logs from another process through
// `ChronicleLog` alone, so tests can check locking, cross-process reading and crashes.
//
//   chronicle-log-probe hold-writer DIR    open DIR for writing, print "ready", wait for stdin to close
//   chronicle-log-probe try-writer DIR     print "opened" or the error, exit 0 or 3
//   chronicle-log-probe try-open-as-nobody DIR read|write
//                                          drop to uid/gid 65534, try to open, print "opened" or the error, exit 0 or 3
//   chronicle-log-probe read-as-nobody DIR drop to uid/gid 65534, open DIR read-only, print "reading", then read it
//                                          pass after pass until an error: print "stopped: ERROR" (exit 0)
//   chronicle-log-probe append DIR COUNT [full|normal] [pauseMicros]
//                                          append COUNT entries, print each acknowledged seq
//   chronicle-log-probe append-for DIR MILLIS
//                                          append as fast as possible for MILLIS ms, print "at N" every 500
//                                          entries and "done N cleared C" at the end (C: stale readers cleared)
//   chronicle-log-probe read-hold DIR      open DIR read-only, print "inside PID" inside a read transaction, hang there
//   chronicle-log-probe read-pipe DIR      with SIGPIPE's default action, write entries to stdout inside one read
//                                          transaction, again and again: dies of SIGPIPE there when the reader leaves
//   chronicle-log-probe watch-verify DIR TARGET
//                                          verify DIR pass after pass while another process writes it
//   chronicle-log-probe witness-race DIR SEED ROUNDS
//                                          add ROUNDS growing checkpoints of a synthetic log (one in five forked)
//                                          to the FileWitness in DIR; print what the witness answered to each
//   chronicle-log-probe open-writer DIR    open DIR for writing (building its tree), print "open", close
//   chronicle-log-probe hashes DIR COUNT   append COUNT fixed entries (timestamps included), half of them in batches,
//                                          then print "path P" (how this process hashes: CHRONICLE_SHA256=swift-crypto
//                                          forces swift-crypto), "valid B" (verify()), "head HEX" and "root HEX"
//   chronicle-log-probe threads DIR        open an encrypted log in DIR, append a batch, replay it, close, twice;
//                                          print the process's thread count before the second round ("before N"),
//                                          while its log is open ("open N") and after its close ("closed N")
//   chronicle-log-probe rekey DIR OLD NEW  rekey DIR from the key file OLD to the key file NEW ("-": in the clear),
//                                          printing "at N" as entries are rewritten and "rekeyed" at the end
import ChronicleLog
import Foundation
import ChronicleTestTools

// MARK: - The witness race's synthetic log

/// The synthetic log of `witness-race` (and its test): leaf `i` is `entry i`, or `forged i` past
/// the first 8 leaves of a fork.
enum WitnessRace {
  static let logKey = try! NoteSigner(name: "chronicle/race/01", seed: Array(repeating: 1, count: 32))
  static let witnessKey = try! NoteSigner(
    name: "witness.test/race", seed: Array(repeating: 2, count: 32), type: .cosignatureV1)

  /// The hashes of the complete subtrees of the first `size` leaves, as `MerkleTree` asks for them.
  static func subtree(size: UInt64, forked: Bool) -> (Int, UInt64) throws -> [UInt8] {
    let leaves = (0..<size).map { MerkleHash.leaf(Array("\(forked && $0 >= 8 ? "forged" : "entry") \($0)".utf8)) }
    return { level, index in
      var hashes = Array(leaves[Int(index << UInt64(level))..<Int((index + 1) << UInt64(level))])
      while hashes.count > 1 {
        hashes = stride(from: 0, to: hashes.count, by: 2).map { MerkleHash.node(hashes[$0], hashes[$0 + 1]) }
      }
      return hashes[0]
    }
  }

  /// The checkpoint of the first `size` leaves, signed by the log's key.
  static func checkpoint(size: UInt64, forked: Bool) throws -> SignedNote {
    let root = try MerkleTree.root(size: size, subtree: subtree(size: size, forked: forked))
    var note = SignedNote(text: Checkpoint(origin: logKey.name, size: size, rootHash: root).text)
    try note.sign(with: logKey)
    return note
  }
}

/// Lower-case hex digits of `bytes`.
func hex(_ bytes: [UInt8]) -> String {
  var text = ""
  for byte in bytes {
    let digits = String(byte, radix: 16)
    text += digits.count == 1 ? "0" + digits : digits
  }
  return text
}

/// The threads of this process (Linux: the entries of /proc/self/task).
func threadCount() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count }

runHelper("chronicle-log-probe") { command, directory, rest in
  switch command {
  case "rekey":
    func ring(_ argument: String?) throws -> KeyRing? {
      guard let argument, argument != "-" else { return nil }
      return try KeyRing(contentsOf: URL(fileURLWithPath: argument))
    }
    try ActionLog.rekey(
      directory: directory, from: try ring(rest.first), to: try ring(rest.dropFirst().first)
    ) { done, _ in say("at \(done)") }
    say("rekeyed")
  case "hold-writer":
    let log = try ActionLog(directory: directory)
    say("ready")
    while readLine() != nil {}
    try log.close()
  case "try-writer":
    reportingOpen {
      let log = try ActionLog(directory: directory)
      say("opened")
      try log.close()
    }
  case "try-open-as-nobody":
    becomeNobody()
    reportingOpen {
      let log = try ActionLog(directory: directory, access: rest.first == "write" ? .readWrite : .readOnly)
      say("opened")
      try log.close()
    }
  case "read-as-nobody":
    becomeNobody()
    let log = try ActionLog(directory: directory, access: .readOnly)
    say("reading")
    do {
      while true {
        _ = try log.verify()
        _ = try log.records(in: 1...UInt64.max, reverse: true, limit: 100)
      }
    } catch {
      say("stopped: \(error)")
    }
  case "append":
    let count = Int(rest.first ?? "") ?? 100
    let durability: Durability = rest.count > 1 && rest[1] == "full" ? .full : .normal
    let pause = rest.count > 2 ? UInt32(rest[2]) ?? 0 : 0
    let log = try ActionLog(directory: directory, options: .init(durability: durability))
    for n in 0..<count {
      let seq = try log.append(
        try NewEntry(encoding: n, typeName: "n", metadata: ["pid": "\(getpid())"], codec: n % 2 == 0 ? .cbor : .json))
      say("\(seq)")
      if pause > 0 { usleep(pause) }
    }
    try log.close()
  case "append-for":
    let millis = Int(rest.first ?? "") ?? 1000
    let log = try ActionLog(directory: directory, options: .init(durability: .normal))
    let deadline = ContinuousClock.now + .milliseconds(millis)
    var count = 0
    while ContinuousClock.now < deadline {
      try log.append(try NewEntry(encoding: count, typeName: "n", metadata: ["pid": "\(getpid())"], codec: .cbor))
      count += 1
      if count % 500 == 0 { say("at \(count)") }
    }
    say("done \(count) cleared \(log.staleReadersCleared)")
    try log.close()
  case "read-hold":
    let log = try ActionLog(directory: directory, access: .readOnly)
    try log.forEach { _ in
      say("inside \(getpid())")
      while true { sleep(60) }
    }
  case "read-pipe":
    signal(SIGPIPE, SIG_DFL)
    let log = try ActionLog(directory: directory, access: .readOnly)
    try log.forEach { record in
      let line = Array("\(record.seq) \(record.typeName) inside \(getpid())\n".utf8)
      while true {
        // Raw write(2): the first write after the reader left raises SIGPIPE, inside this transaction.
        guard line.withUnsafeBytes({ write(1, $0.baseAddress, $0.count) }) > 0 else { exit(5) }
      }
    }
  case "watch-verify":
    // watch-verify DIR TARGET: read DIR while another process writes it; verify every pass (gapless from 1,
    // chain intact, never shrinking) until it holds TARGET entries; print "passes P last L" or "bad …" (exit 3).
    let target = UInt64(rest.first ?? "") ?? 1
    let log = try ActionLog(directory: directory, access: .readOnly)
    var passes = 0
    var last: UInt64 = 0
    while last < target {
      let report = try log.verify()
      passes += 1
      let upper = report.range?.upperBound ?? 0
      guard report.isValid, report.range == nil || report.range?.lowerBound == 1, upper >= last,
        report.entriesChecked == Int(upper)
      else {
        say("bad pass \(passes): \(report.problems.prefix(3)) range \(String(describing: report.range)) after \(last)")
        exit(3)
      }
      last = upper
    }
    say("passes \(passes) last \(last)")
    try log.close()
  case "witness-race":
    // Each round: a checkpoint a little larger than the last (forked after leaf 8 one time in five),
    // added against the size the witness holds now. Prints "cosigned SIZE honest|forked TIMESTAMP
    // BASE64-SIGNATURE" or "refused SIZE honest|forked REASON"; any other error ends the process.
    var random = SplitMix64(seed: UInt64(rest.first ?? "") ?? 1)
    let rounds = rest.count > 1 ? Int(rest[1]) ?? 50 : 50
    let witness = try FileWitness(
      directory: directory, signer: WitnessRace.witnessKey, logs: [WitnessRace.logKey.name: WitnessRace.logKey.verifier])
    for round in 0..<UInt64(rounds) {
      let size = 17 + round * 2 + UInt64.random(in: 0..<6, using: &random)
      let forked = UInt64.random(in: 0..<5, using: &random) == 0
      let kind = forked ? "forked" : "honest"
      let note = try WitnessRace.checkpoint(size: size, forked: forked)
      let held = try witness.latest(origin: WitnessRace.logKey.name).map { try Checkpoint(parsing: $0.text).size } ?? 0
      let proof =
        held <= size
        ? try MerkleTree.consistencyProof(from: held, to: size, subtree: WitnessRace.subtree(size: size, forked: forked))
        : []
      do {
        let cosignature = try witness.add(checkpoint: note, oldSize: held, consistencyProof: proof)
        say("cosigned \(size) \(kind) \(cosignature.timestamp) \(Data(cosignature.signature).base64EncodedString())")
      } catch let error as TreeError {
        guard case .witnessRefused = error else { throw error }
        say("refused \(size) \(kind) \(error)")
      }
    }
  case "hashes":
    let count = Int(rest.first ?? "") ?? 0
    let log = try ActionLog(directory: directory)
    var entries: [NewEntry] = []
    for index in 0..<count {
      var entry = try NewEntry(encoding: index + 1, typeName: "n", metadata: ["n": String(index + 1)], codec: .cbor)
      entry.timestamp = 1_800_000_000_000_000 + Int64(index)
      entries.append(entry)
    }
    let half = count / 2
    var start = 0
    while start < half {
      let end = min(start + 50, half)
      try log.append(contentsOf: Array(entries[start..<end]))
      start = end
    }
    for entry in entries[half...] { try log.append(entry) }
    let report = try log.verify()
    let root: [UInt8] = try log.treeRoot(size: try log.treeSize)
    say("path " + String(describing: SHA256Path.current))
    say("valid " + String(report.isValid))
    say("head " + hex(report.head))
    say("root " + hex(root))
    try log.close()
  case "threads":
    let ring = try KeyRing([.random()])
    for round in 0..<2 {
      if round == 1 { say("before " + String(try threadCount())) }
      // No background flush: its timer's ticks run on threads of the system's pool, which come and go
      // as that pool decides (it runs nothing between them).
      let options = ActionLog.Options(flushInterval: nil, keyRing: ring)
      let log = try ActionLog(directory: directory.appendingPathComponent(String(round)), options: options)
      var batch: [NewEntry] = []
      for n in 0..<1_000 { batch.append(try NewEntry(encoding: n, typeName: "n", codec: .cbor)) }
      try log.append(contentsOf: batch)
      var opened = 0
      try log.scan(in: 1...1_000) { (entry: EntryView) in
        if !entry.payload.isEmpty { opened += 1 }
      }
      precondition(opened == 1_000, "the replay opened \(opened) of 1,000 entries")
      if round == 1 { say("open " + String(try threadCount())) }
      try log.close()
      if round == 1 { say("closed " + String(try threadCount())) }
    }
  case "open-writer":
    let log = try ActionLog(directory: directory)
    say("open")
    try log.close()
  default:
    return false
  }
  return true
}
