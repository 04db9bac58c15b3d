import CBOR
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
  var types: [String: Int] = [:]
  var kinds: [String: Int] = [:]
  /// Every counted entry's time, in µs, in sequence order.
  var times: [Int64] = []
}

extension Inspector {
  /// `GET /api/stats?buckets=N`: entries per type and kind, and entries over time in N buckets.
  func stats(_ query: Query) throws -> String {
    let bucketCount = try query.int("buckets", in: 1...1000) ?? 60
    var stats = caches.withLock { $0.stats }
    if let bounds = try log.bounds() {
      var start = stats.through.map { $0 + 1 } ?? bounds.lowerBound
      if start < bounds.lowerBound {
        // Compaction removed counted entries: count again.
        stats = TypeStats()
        start = bounds.lowerBound
      }
      while start <= bounds.upperBound {
        let end = bounds.upperBound - start >= 4095 ? start + 4095 : bounds.upperBound
        for record in try log.records(in: start...end) {
          stats.types[record.typeName, default: 0] += 1
          stats.kinds[record.kind.description, default: 0] += 1
          stats.times.append(record.timestamp)
        }
        stats.through = end
        if end == bounds.upperBound { break }
        start = end + 1
      }
      let counted = stats
      caches.withLock { $0.stats = counted }
    }
    var out = JSONWriter()
    out.beginObject()
    out.field("count", stats.times.count)
    out.key("types")
    out.beginArray()
    for (name, count) in stats.types.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }).prefix(50) {
      out.beginObject()
      out.field("type", name)
      out.field("count", count)
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
  /// checkpoint, checked against the log's tree (and its signatures, given the verifier key).
  /// The report is kept until the log grows.
  func verification() throws -> String {
    let last = try log.bounds()?.upperBound
    if let cached = caches.withLock({ $0.verification }), cached.last == last { return cached.json }
    let chain = try chainReport()
    var out = JSONWriter()
    out.beginObject()
    out.key("chain")
    out.raw(chain)
    out.key("checkpoints")
    out.beginArray()
    for note in try log.checkpoints() { try writeCheckpoint(note, into: &out) }
    out.endArray()
    out.field("signaturesChecked", verifier != nil)
    out.endObject()
    let json = out.text
    caches.withLock { $0.verification = (last, json) }
    return json
  }

  /// The chain's report as JSON: from the verify command in a child process, or in this process.
  func chainReport() throws -> String {
    guard let command = verifyCommand, let executable = command.first else {
      let report = try log.verify()
      var out = JSONWriter()
      out.beginObject()
      out.field("path", path)
      out.field("valid", report.isValid)
      out.field("entriesChecked", report.entriesChecked)
      out.field("snapshotsChecked", report.snapshotsChecked)
      out.field("head", report.head.hex)
      out.key("firstBadSeq")
      if let seq = report.firstBadSeq { out.uint(seq) } else { out.null() }
      out.key("problems")
      out.beginArray()
      for problem in report.problems {
        out.beginObject()
        out.field("location", problem.location.description)
        out.field("message", problem.message)
        out.endObject()
      }
      out.endArray()
      out.endObject()
      return out.text
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
    if text.hasPrefix("{") { return text }
    // No report: the verifier could not read the log (damage it reports on standard error).
    var out = JSONWriter()
    out.beginObject()
    out.field("path", path)
    out.field("valid", false)
    out.key("problems")
    out.beginArray()
    out.beginObject()
    out.field("location", "log")
    out.field("message", errorText.trimmingCharacters(in: .whitespacesAndNewlines))
    out.endObject()
    out.endArray()
    out.endObject()
    return out.text
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
