#if Inspector
import ChronicleCBOR
import ChronicleLog
import Foundation
import LogToolKit

// MARK: - JSON diff

/// One difference between two JSON values: at `path` (JSON Pointer), a value added, removed or changed.
struct JSONChange {
  var path: String
  var op: String
  var before: Any?
  var after: Any?

  /// Appends the differences between `before` and `after` under `path`, objects by key,
  /// arrays by index, anything else by value.
  static func collect(_ before: Any, _ after: Any, path: String, into changes: inout [JSONChange]) {
    if let old = before as? [String: Any], let new = after as? [String: Any] {
      for key in Set(old.keys).union(new.keys).sorted() {
        let child = path + "/" + pointerToken(key)
        switch (old[key], new[key]) {
        case (let a?, let b?): collect(a, b, path: child, into: &changes)
        case (let a?, nil): changes.append(JSONChange(path: child, op: "removed", before: a, after: nil))
        case (nil, let b?): changes.append(JSONChange(path: child, op: "added", before: nil, after: b))
        case (nil, nil): break
        }
      }
    } else if let old = before as? [Any], let new = after as? [Any] {
      for index in 0..<max(old.count, new.count) {
        let child = path + "/" + String(index)
        if index < old.count, index < new.count {
          collect(old[index], new[index], path: child, into: &changes)
        } else if index < old.count {
          changes.append(JSONChange(path: child, op: "removed", before: old[index], after: nil))
        } else {
          changes.append(JSONChange(path: child, op: "added", before: nil, after: new[index]))
        }
      }
    } else if !equal(before, after) {
      changes.append(JSONChange(path: path, op: "changed", before: before, after: after))
    }
  }

  static func pointerToken(_ key: String) -> String {
    key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
  }

  static func equal(_ a: Any, _ b: Any) -> Bool { text(a) == text(b) }

  static func text(_ value: Any) -> String {
    guard
      let data = try? JSONSerialization.data(
        withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
    else { return "null" }
    return String(decoding: data, as: UTF8.self)
  }

  func write(into out: inout JSONWriter) {
    out.beginObject()
    out.field("path", path)
    out.field("op", op)
    if let before {
      out.key("before")
      out.raw(Self.text(before))
    }
    if let after {
      out.key("after")
      out.raw(Self.text(after))
    }
    out.endObject()
  }
}

// MARK: - Statistics

/// Entries per action type and their times, kept up to date as the log grows: each request
/// reads only the entries written since the last one.
struct TypeStats {
  /// The last entry counted.
  var through: UInt64?
  /// That entry's chain hash, the log's identifier and anchor when it was counted: if any
  /// differs now, the log was compacted, replaced or rewritten and is counted again.
  var throughHash: [UInt8] = []
  var logID: [UInt8]?
  var anchor: ChainAnchor?
  var types: [String: Int] = [:]
  /// Entries whose type name is sealed with a key the server does not hold, per key id.
  var encrypted: [String: Int] = [:]
  var kinds: [String: Int] = [:]
  /// Every counted entry's time, in µs, in sequence order.
  var times: [Int64] = []
}

extension Inspector {
  /// `GET /api/stats?buckets=N`: entries per type and kind, and entries over time in N buckets.
  ///
  /// Entries whose type name is sealed with a key the server does not hold count per key:
  /// `{"encrypted": true, "keyID", "count"}` among the types.
  func stats(_ query: Query) throws -> String {
    let bucketCount = try query.int("buckets", in: 1...1000) ?? 60
    var stats = caches.withLock { $0.stats }
    var read = 0
    if let through = stats.through {
      let anchor = try log.meta().anchor
      if try anchor != stats.anchor || log.logID() != stats.logID || log.record(at: through)?.hash != stats.throughHash {
        // Compacted, replaced or rewritten: what was counted may be gone, count again.
        stats = TypeStats()
      }
    }
    if let bounds = try log.bounds() {
      var start = stats.through.map { $0 + 1 } ?? bounds.lowerBound
      if stats.through == nil {
        stats.anchor = try log.meta().anchor
        stats.logID = try log.logID()
      }
      while start <= bounds.upperBound {
        let end = bounds.upperBound - start >= 4095 ? start + 4095 : bounds.upperBound
        let records = try log.records(in: start...end)
        for record in records {
          if let keyID = record.sealedKeyID, record.typeName.isEmpty {
            stats.encrypted[EncryptionKey.idText(keyID), default: 0] += 1
          } else {
            stats.types[record.typeName, default: 0] += 1
          }
          stats.kinds[record.kind.description, default: 0] += 1
          stats.times.append(record.timestamp)
        }
        read += records.count
        if let last = records.last {
          stats.through = last.seq
          stats.throughHash = last.hash
        }
        if end == bounds.upperBound { break }
        start = end + 1
      }
      let counted = stats
      caches.withLock { $0.stats = counted }
    }
    var out = JSONWriter()
    out.beginObject()
    out.field("count", stats.times.count)
    out.field("read", read)
    out.key("types")
    out.beginArray()
    // The types and, for the entries whose type name is sealed, one item per key, most frequent first.
    let items =
      stats.types.map { (label: $0.key, count: $0.value, keyID: String?.none) }
      + stats.encrypted.map { (label: "encrypted (key \($0.key))", count: $0.value, keyID: Optional($0.key)) }
    for item in items.sorted(by: { ($1.count, $0.label) < ($0.count, $1.label) }).prefix(50) {
      out.beginObject()
      if let keyID = item.keyID {
        out.field("encrypted", true)
        out.field("keyID", keyID)
      } else {
        out.field("type", item.label)
      }
      out.field("count", item.count)
      out.endObject()
    }
    out.endArray()
    out.key("kinds")
    out.beginObject()
    for (name, count) in stats.kinds.sorted(by: { $0.key < $1.key }) { out.field(name, count) }
    out.endObject()
    out.key("timeline")
    out.beginObject()
    if let low = stats.times.min(), let high = stats.times.max() {
      let width = max(1, (high - low) / Int64(bucketCount) + 1)
      var buckets = [Int](repeating: 0, count: bucketCount)
      for time in stats.times { buckets[min(bucketCount - 1, Int((time - low) / width))] += 1 }
      out.field("start", Int(low))
      out.field("bucketMicros", Int(width))
      out.key("counts")
      out.beginArray()
      for count in buckets { out.int(count) }
      out.endArray()
    }
    out.endObject()
    out.endObject()
    return out.text
  }
}

// MARK: - Verification

extension Inspector {
  /// `GET /api/verify`: the chain's verification (`verify --json`'s report) and every stored
  /// checkpoint, checked against the log's tree (and its signatures, given the verifier key), and
  /// `flagged`: the entries the chain's problems name, with their problems.
  ///
  /// The first request verifies the whole log; later ones check only the entries written since
  /// (``/ChronicleLog/ActionLog/verifyGrowth(from:)``), from the last verified entry whose stored
  /// hash must still be the one verified. A compacted, replaced or rewritten log is verified again
  /// from the start. The chain report's `incremental` object says which happened.
  func verification() throws -> String {
    let cached = caches.withLock { $0.verification }
    let chain: String
    if let cached, let prefix = cached.prefix, let growth = try log.verifyGrowth(from: prefix) {
      chain = Self.extend(cached.chain, with: growth.report, after: prefix.head.seq)
      let base = growth.report.isValid ? chain : cached.chain
      caches.withLock { $0.verification = VerifiedChain(prefix: growth.prefix, chain: base, last: nil) }
    } else {
      let last = try log.bounds()?.upperBound
      if let cached, cached.prefix == nil, cached.last == last {
        chain = cached.chain
      } else {
        chain = try chainReport()
        let prefix = try Self.prefix(of: chain).map { try log.verifiedPrefix(head: $0.last, hash: $0.head) }
        caches.withLock { $0.verification = VerifiedChain(prefix: prefix, chain: chain, last: last) }
      }
    }
    var out = JSONWriter()
    out.beginObject()
    out.key("chain")
    out.raw(chain)
    out.key("checkpoints")
    out.beginArray()
    for note in try log.checkpoints() { try writeCheckpoint(note, into: &out) }
    out.endArray()
    out.field("signaturesChecked", verifier != nil)
    out.key("flagged")
    out.beginArray()
    for (seq, problems) in Self.flaggedEntries(in: chain) {
      out.beginObject()
      out.field("seq", seq)
      out.key("problems")
      out.beginArray()
      for problem in problems { out.string(problem) }
      out.endArray()
      out.endObject()
    }
    out.endArray()
    out.endObject()
    return out.text
  }

  /// The entries the chain report's problems name (`"location": "entry N"`), in sequence order,
  /// each with the messages of its problems: the entries the page marks.
  static func flaggedEntries(in chain: String) -> [(seq: UInt64, problems: [String])] {
    guard let report = try? VerifyReport(json: chain) else { return [] }
    var flagged: [UInt64: [String]] = [:]
    for problem in report.problems {
      guard problem.location.hasPrefix("entry "), let seq = UInt64(problem.location.dropFirst("entry ".count)) else {
        continue
      }
      flagged[seq, default: []].append(problem.message)
    }
    return flagged.sorted { $0.key < $1.key }.map { (seq: $0.key, problems: $0.value) }
  }

  /// The last entry and chain hash a valid chain report verified, or `nil` for an invalid one.
  static func prefix(of chain: String) -> (last: UInt64, head: [UInt8])? {
    guard let report = try? VerifyReport(json: chain), report.valid, let head = Self.bytes(hex: report.head) else {
      return nil
    }
    return (report.range?.last ?? 0, head)
  }

  static func bytes(hex: String) -> [UInt8]? {
    guard hex.utf8.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
      bytes.append(byte)
      index = next
    }
    return bytes
  }

  /// `chain` (a valid report up to entry `after`) extended by the check of the entries after it.
  static func extend(_ chain: String, with growth: VerificationReport, after: UInt64) -> String {
    guard var report = try? VerifyReport(json: chain) else { return chain }
    report.extend(with: growth, after: after)
    return report.json
  }

  /// The chain's report as JSON: from the verify command in a child process, or in this process.
  func chainReport() throws -> String {
    guard let command = verifyCommand, let executable = command.first else {
      let start = Date()
      var report = VerifyReport(path: path, anchor: try log.meta().anchor, report: try log.verify())
      report.seconds = (Date().timeIntervalSince(start) * 1000).rounded() / 1000
      return report.json
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = Array(command.dropFirst())
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    if let report = try? VerifyReport(json: text) { return report.json }
    // No report: the verifier could not read the log (damage it reports on standard error).
    return VerifyReport(path: path, unreadable: errorText.trimmingCharacters(in: .whitespacesAndNewlines)).json
  }

  /// One stored checkpoint: whether the log still holds its tree, and with the verifier key its signatures.
  func writeCheckpoint(_ note: SignedNote, into out: inout JSONWriter) throws {
    out.beginObject()
    out.key("signers")
    out.beginArray()
    for signature in note.signatures { out.string(signature.name) }
    out.endArray()
    guard let checkpoint = try? Checkpoint(parsing: note.text) else {
      out.field("valid", false)
      out.key("problems")
      out.beginArray()
      out.string("its text is not a checkpoint")
      out.endArray()
      out.endObject()
      return
    }
    out.field("origin", checkpoint.origin)
    out.field("size", checkpoint.size)
    out.field("rootHash", checkpoint.rootHash.hex)
    var problems: [String] = []
    if let verifier {
      do {
        let result = try log.verify(checkpoint: note, verifier: verifier)
        problems = result.problems.map(\.description)
      } catch { problems.append("\(error)") }
    } else {
      do {
        let treeSize = try log.treeSize
        if checkpoint.size > treeSize {
          problems.append("the log's tree has \(treeSize) entries, fewer than the checkpoint's \(checkpoint.size)")
        } else if try log.treeRoot(size: checkpoint.size) != checkpoint.rootHash {
          problems.append("the log's tree of size \(checkpoint.size) has another root: its history was rewritten")
        }
      } catch { problems.append("\(error)") }
    }
    out.field("valid", problems.isEmpty)
    out.key("problems")
    out.beginArray()
    for problem in problems { out.string(problem) }
    out.endArray()
    out.endObject()
  }
}
#endif  // Inspector
