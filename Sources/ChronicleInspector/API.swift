#if Inspector
import ChronicleCBOR
import Chronicle
import ChronicleLog
import Foundation
import LogToolKit

// MARK: - Limits

extension Inspector {
  /// The most entries one page may hold.
  static let maxPage = 1000
  /// The most entries one filtered page reads before it answers with a cursor to go on from.
  static let scanBudget: UInt64 = 20_000
}

// MARK: - Info

extension Inspector {
  /// `GET /api/info`: the log's path, range, anchor, head and what this server can show.
  func info() throws -> String {
    let meta = try log.meta()
    let bounds = try log.bounds()
    let head = try log.head()
    var out = JSONWriter()
    out.beginObject()
    out.field("path", path)
    out.field("formatVersion", Int(ActionLog.formatVersion))
    out.key("first")
    if let bounds { out.uint(bounds.lowerBound) } else { out.null() }
    out.key("last")
    if let bounds { out.uint(bounds.upperBound) } else { out.null() }
    out.field("count", bounds.map { Int($0.upperBound - $0.lowerBound + 1) } ?? 0)
    out.key("anchor")
    out.beginObject()
    out.field("seq", meta.anchor.seq)
    out.field("hash", meta.anchor.hash.hex)
    out.endObject()
    out.key("head")
    out.beginObject()
    out.field("seq", head.seq)
    out.field("hash", head.hash.hex)
    out.endObject()
    out.field("states", states != nil)
    out.field("tokenRequired", token != nil)
    writeControls(into: &out)
    out.endObject()
    return out.text
  }
}

// MARK: - Entries

extension Inspector {
  /// `GET /api/entries`: a page of entry summaries, filtered.
  ///
  /// `from` (default: the first entry, or the last with `order=desc`), `order` (`asc`, `desc`),
  /// `limit` (1…1000, default 100), and the filters `type`, `kind`, `meta`, `since`, `until`, `q`.
  /// A filtered page reads at most ``scanBudget`` entries; `next` says where to go on.
  func entries(_ query: Query) throws -> String {
    let filter = try query.filter()
    let limit = try query.int("limit", in: 1...Self.maxPage) ?? 100
    let descending: Bool
    switch try query.string("order") ?? "asc" {
    case "asc": descending = false
    case "desc": descending = true
    case let other: throw APIError.badRequest("'order' must be asc or desc, not '\(other.prefix(40))'")
    }
    let search = try query.string("q").flatMap { $0.isEmpty ? nil : $0 }
    let from = try query.seq("from")
    let bounds = try log.bounds()
    let snapshots = try snapshotSeqs(last: bounds?.upperBound)

    var matched: [StoredEntry] = []
    var next: UInt64?
    var scanned: UInt64 = 0
    if let bounds {
      var cursor: UInt64? = from.map { min(max($0, bounds.lowerBound), bounds.upperBound) }
        ?? (descending ? bounds.upperBound : bounds.lowerBound)
      if let start = from, descending ? start < bounds.lowerBound : start > bounds.upperBound { cursor = nil }
      while let position = cursor, matched.count < limit {
        if scanned >= Self.scanBudget {
          next = position
          break
        }
        let chunk = UInt64(min(limit - matched.count, 256)) + (query.filters ? 256 : 0)
        let range: ClosedRange<UInt64>
        if descending {
          range = (position >= bounds.lowerBound + chunk - 1 ? position - (chunk - 1) : bounds.lowerBound)...position
        } else {
          range = position...(bounds.upperBound - position >= chunk - 1 ? position + (chunk - 1) : bounds.upperBound)
        }
        let records = try log.records(in: range)
        var stoppedAt: UInt64?
        for record in descending ? records.reversed() : records {
          scanned += 1
          guard filter.matches(record), search.map({ Self.payload(of: record).contains($0) }) ?? true else { continue }
          matched.append(record)
          if matched.count == limit {
            stoppedAt = record.seq
            break
          }
        }
        let last = stoppedAt ?? (descending ? range.lowerBound : range.upperBound)
        if descending {
          cursor = last > bounds.lowerBound ? last - 1 : nil
        } else {
          cursor = last < bounds.upperBound ? last + 1 : nil
        }
        if matched.count == limit { next = cursor }
      }
    }

    var jumps = JumpResolver(log)
    let shared = isSharedStream
    var out = JSONWriter()
    out.beginObject()
    out.key("first")
    if let bounds { out.uint(bounds.lowerBound) } else { out.null() }
    out.key("last")
    if let bounds { out.uint(bounds.upperBound) } else { out.null() }
    out.field("scanned", Int(scanned))
    out.key("next")
    if let next { out.uint(next) } else { out.null() }
    out.key("entries")
    out.beginArray()
    for record in matched {
      Self.writeSummary(
        record, jump: jumps.resolve(record), snapshot: snapshots.contains(record.seq), shared: shared, into: &out)
    }
    out.endArray()
    out.endObject()
    return out.text
  }

  /// The payload as compact JSON, or its codec's error, for the payload search.
  static func payload(of record: StoredEntry) -> String {
    (try? PayloadText.compactJSON(record.payload, codec: record.codec)) ?? ""
  }

  /// One row of the list: no payload, but what the list shows; for an entry sealed with a key the
  /// server does not hold, `encrypted` and the key's id (`keyID`); for an entry of a shared
  /// stream's device copy (`shared`), whether it is confirmed or a rejection (``writeRole(of:into:)``).
  static func writeSummary(
    _ record: StoredEntry, jump: JumpResolution?, snapshot: Bool, shared: Bool = false, into out: inout JSONWriter
  ) {
    out.beginObject()
    out.field("seq", record.seq)
    out.field("timestamp", Int(record.timestamp))
    out.field("time", ISOTime.string(micros: record.timestamp, fractionDigits: 3))
    out.field("kind", record.kind.description)
    out.key("flags")
    out.beginArray()
    for name in Format.flagNames(record.flags) { out.string(name) }
    out.endArray()
    out.field("typeName", record.typeName)
    out.key("metadata")
    out.beginObject()
    for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) { out.field(key, value) }
    out.endObject()
    out.field("size", record.storedSize)
    if let keyID = record.sealedKeyID {
      out.field("encrypted", true)
      out.field("keyID", EncryptionKey.idText(keyID))
    }
    out.field("snapshot", snapshot)
    if let jump {
      out.key("jump")
      out.beginObject()
      out.field("target", jump.target)
      out.field("state", jump.state)
      out.field("summary", jump.summary)
      out.endObject()
    }
    if shared { writeRole(of: record, into: &out) }
    out.endObject()
  }

  /// `GET /api/entries/SEQ`: one entry in full, its payload as JSON; in a shared stream's device
  /// copy, with its role (``writeRole(of:into:)``).
  func entry(_ seq: UInt64) throws -> String {
    guard let record = try log.record(at: seq) else { throw try noEntry(seq) }
    var jumps = JumpResolver(log)
    var out = JSONWriter()
    record.writeJSON(into: &out, jump: jumps.resolve(record))
    // One more field: whether a snapshot was taken after it.
    let snapshot = try snapshotSeqs(last: try log.bounds()?.upperBound).contains(seq)
    out.bytes.removeLast()
    out.bytes.append(contentsOf: Array(",\"snapshot\":\(snapshot)".utf8))
    // And, in a shared stream's device copy, whether it is confirmed or a rejection.
    if isSharedStream {
      var role = JSONWriter()
      role.beginObject()
      Self.writeRole(of: record, into: &role)
      role.endObject()
      if role.bytes.count > 2 { out.bytes.append(contentsOf: [UInt8(ascii: ",")] + role.bytes.dropFirst().dropLast()) }
    }
    out.bytes.append(UInt8(ascii: "}"))
    return out.text
  }

  /// The 404 for an unknown sequence number, saying what the log holds.
  func noEntry(_ seq: UInt64) throws -> APIError {
    if let bounds = try log.bounds() {
      let anchor = try log.meta().anchor
      if seq <= anchor.seq, seq > 0 {
        return .notFound("the log has no entry \(seq): compaction removed it (the log starts after \(anchor.seq))")
      }
      return .notFound("the log has no entry \(seq) (it holds \(bounds.lowerBound)…\(bounds.upperBound))")
    }
    return .notFound("the log has no entry \(seq) (it holds no entries)")
  }

  /// The sequence numbers that have snapshots, read again when the log grew.
  func snapshotSeqs(last: UInt64?) throws -> Set<UInt64> {
    if let cached = caches.withLock({ $0.snapshotSeqs }), cached.last == last { return cached.seqs }
    let seqs = Set(try log.snapshots().map(\.seq))
    caches.withLock { $0.snapshotSeqs = (last, seqs) }
    return seqs
  }
}

// MARK: - Snapshots

extension Inspector {
  /// `GET /api/snapshots`: every snapshot, oldest first.
  func snapshotList() throws -> String {
    var out = JSONWriter()
    out.beginArray()
    for snapshot in try log.snapshots() {
      out.beginObject()
      out.field("seq", snapshot.seq)
      out.field("timestamp", Int(snapshot.timestamp))
      out.field("time", ISOTime.string(micros: snapshot.timestamp, fractionDigits: 3))
      out.field("codec", snapshot.codec.description)
      out.field("schemaVersion", Int(snapshot.schemaVersion))
      out.field("size", snapshot.size)
      out.endObject()
    }
    out.endArray()
    return out.text
  }
}

// MARK: - States and diffs

extension Inspector {
  /// The state after `seq`, as JSON text.
  func stateJSON(_ seq: UInt64) throws -> [UInt8] {
    guard let states else {
      throw APIError.notFound(
        "this tool has no reducer, so it shows no states: serve the log with the app's own tool (built with LogToolKit)")
    }
    let last = try log.bounds()?.upperBound ?? log.head().seq
    guard seq <= last else { throw try noEntry(seq) }
    do { return try states.state(seq) } catch let error as ChronicleError {
      if case .noSuchEntry = error { throw APIError.notFound("\(error)") }
      throw APIError(status: 500, message: "computing the state after \(seq) failed: \(error)")
    }
  }

  /// `GET /api/state/SEQ`: `{"seq": SEQ, "state": …}`.
  func state(_ seq: UInt64) throws -> String {
    let json = try stateJSON(seq)
    return "{\"seq\":\(seq),\"state\":" + String(decoding: json, as: UTF8.self) + "}"
  }

  /// `GET /api/diff?from=A&to=B`: what changed between the states after A and after B.
  func diff(_ query: Query) throws -> String {
    guard let to = try query.seq("to") else { throw APIError.badRequest("'to' is missing: /api/diff?from=A&to=B") }
    let from = try query.seq("from") ?? (to > 0 ? to - 1 : 0)
    let before = try JSONSerialization.jsonObject(with: Data(try stateJSON(from)), options: .fragmentsAllowed)
    let after = try JSONSerialization.jsonObject(with: Data(try stateJSON(to)), options: .fragmentsAllowed)
    var changes: [JSONChange] = []
    JSONChange.collect(before, after, path: "", into: &changes)
    var out = JSONWriter()
    out.beginObject()
    out.field("from", from)
    out.field("to", to)
    out.key("changes")
    out.beginArray()
    for change in changes { change.write(into: &out) }
    out.endArray()
    out.endObject()
    return out.text
  }
}
#endif  // Inspector
