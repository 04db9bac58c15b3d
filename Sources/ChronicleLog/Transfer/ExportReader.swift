import Foundation
import LMDB

/// Reads an export line by line, checking everything: the shared core of
/// ``ActionLog/checkExport(at:progress:)`` and ``ActionLog/importLog(from:into:progress:)``.
struct ExportReader {
  enum Item {
    case entry(seq: UInt64, value: [UInt8])
    case snapshot(seq: UInt64, value: [UInt8], line: Int)
  }

  struct Header {
    var meta: LogMeta
    var entries: Int
    var snapshots: [UInt64]
    var head: ChainAnchor
  }

  let path: String
  private(set) var header: Header
  private(set) var entriesRead = 0
  private var snapshotsRead: [UInt64] = []
  private var lines: LineReader
  private var lineNumber = 1
  private var previous: ChainAnchor
  private var snapshotHashes: [UInt64: [UInt8]] = [:]
  private let listedSnapshots: Set<UInt64>
  private let decoder = JSONDecoder()

  init(path: String) throws {
    self.path = path
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
      throw LogError.io(path: path, operation: "read the export", reason: "it is a directory, not an export file")
    }
    lines = try LineReader(path: path)
    guard let first = try lines.next() else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil, reason: "the file is empty: not a Chronicle export")
    }
    let line: ExportFormat.Line
    do { line = try decoder.decode(ExportFormat.Line.self, from: Data(first)) } catch {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil, reason: "not a Chronicle export: the first line is not JSON")
    }
    func missing(_ field: String) -> LogError {
      .invalidExport(path: path, line: 1, seq: nil, reason: "the header has no valid '\(field)'")
    }
    guard let version = line.chronicleExport else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil, reason: "not a Chronicle export: the first line has no 'chronicleExport'")
    }
    guard version <= ActionLog.exportFormatVersion else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil,
        reason: "export format \(version) is newer than this version reads (\(ActionLog.exportFormatVersion))")
    }
    guard let format = line.formatVersion else { throw missing("formatVersion") }
    guard format <= ActionLog.formatVersion else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil,
        reason: "written in log format \(format); this version reads format \(ActionLog.formatVersion) and older")
    }
    guard let appID = line.appID else { throw missing("appID") }
    guard let schema = line.schemaVersion else { throw missing("schemaVersion") }
    guard let created = line.created else { throw missing("created") }
    guard let anchor = line.anchor, let anchorHash = [UInt8](hex: anchor.hash), anchorHash.count == 32 else {
      throw missing("anchor")
    }
    guard anchor.seq < UInt64.max else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil,
        reason: "the anchor's sequence number \(anchor.seq) is the largest there is: no entry could follow it")
    }
    guard let entries = line.entries, entries >= 0 else { throw missing("entries") }
    guard let snapshots = line.snapshots, zip(snapshots, snapshots.dropFirst()).allSatisfy({ $0 < $1 }) else {
      throw missing("snapshots")
    }
    guard let head = line.head, let headHash = [UInt8](hex: head.hash), headHash.count == 32 else {
      throw missing("head")
    }
    let meta = LogMeta(
      formatVersion: format, appID: appID, schemaVersion: schema, created: created,
      anchor: ChainAnchor(seq: anchor.seq, hash: anchorHash))
    header = Header(
      meta: meta, entries: entries, snapshots: snapshots, head: ChainAnchor(seq: head.seq, hash: headHash))
    listedSnapshots = Set(snapshots)
    previous = meta.anchor
  }

  /// What was read so far, as a report.
  var report: TransferReport {
    TransferReport(
      path: path, meta: header.meta,
      range: entriesRead > 0 ? (header.meta.anchor.seq + 1)...previous.seq : nil, entries: entriesRead,
      snapshots: snapshotsRead, head: previous, bytes: lines.bytesRead)
  }

  /// The next checked entry or snapshot, or `nil` at the end of the file.
  mutating func next() throws -> Item? {
    while let bytes = try lines.next() {
      lineNumber += 1
      if bytes.isEmpty { continue }
      let line: ExportFormat.Line
      do { line = try decoder.decode(ExportFormat.Line.self, from: Data(bytes)) } catch {
        throw LogError.invalidExport(
          path: path, line: lineNumber, seq: nil, reason: ExportFormat.describe(error))
      }
      switch line.record {
      case "entry": return .entry(seq: line.seq ?? 0, value: try entryValue(line))
      case "snapshot":
        let (seq, value) = try snapshotValue(line)
        return .snapshot(seq: seq, value: value, line: lineNumber)
      default:
        throw fail(line.seq, "'record' must be \"entry\" or \"snapshot\"")
      }
    }
    return nil
  }

  /// Checks that the file held what its header promised.
  func finish() throws {
    guard entriesRead == header.entries else {
      throw LogError.invalidExport(
        path: path, line: lineNumber, seq: nil,
        reason: "the header promises \(header.entries) entries, the file holds \(entriesRead): truncated or extended")
    }
    guard snapshotsRead == header.snapshots else {
      throw LogError.invalidExport(
        path: path, line: lineNumber, seq: nil,
        reason: "the header promises snapshots \(header.snapshots), the file holds \(snapshotsRead)")
    }
    guard previous == header.head else {
      throw LogError.invalidExport(
        path: path, line: lineNumber, seq: nil,
        reason:
          "the last entry (\(previous.seq), \(previous.hash.hex)) is not the head the header names (\(header.head.seq))"
      )
    }
  }

  private func fail(_ seq: UInt64?, _ reason: String) -> LogError {
    .invalidExport(path: path, line: lineNumber, seq: seq, reason: reason)
  }

  private mutating func entryValue(_ line: ExportFormat.Line) throws -> [UInt8] {
    guard let seq = line.seq else { throw fail(nil, "an entry line without 'seq'") }
    guard snapshotsRead.isEmpty else { throw fail(seq, "an entry after the snapshots: entries come first") }
    guard previous.seq < UInt64.max, seq == previous.seq + 1 else {
      guard previous.seq < UInt64.max else { throw fail(seq, "out of sequence: no entry can follow \(previous.seq)") }
      throw fail(seq, "out of sequence: expected entry \(previous.seq + 1)")
    }
    guard let timestamp = line.timestamp else { throw fail(seq, "no 'timestamp'") }
    guard let kindName = line.kind, let kind = EntryKind(name: kindName) else { throw fail(seq, "no valid 'kind'") }
    guard let flags = line.flags else { throw fail(seq, "no valid 'flags' (0…255)") }
    guard let codecName = line.codec, let codec = PayloadCodec(name: codecName) else {
      throw fail(seq, "no valid 'codec'")
    }
    guard let schema = line.schemaVersion else { throw fail(seq, "no valid 'schemaVersion'") }
    guard let typeName = line.typeName else { throw fail(seq, "no 'typeName'") }
    guard let base64 = line.payloadBase64, let payload = Data(base64Encoded: base64) else {
      throw fail(seq, "no valid 'payloadBase64'")
    }
    guard let hashText = line.hash, let hash = [UInt8](hex: hashText), hash.count == 32 else {
      throw fail(seq, "no valid 'hash' (64 hex digits)")
    }
    let entry = NewEntry(
      kind: kind, flags: EntryFlags(rawValue: flags), typeName: typeName, metadata: line.metadata ?? [:],
      codec: codec, schemaVersion: schema, payload: Array(payload), timestamp: timestamp)
    var writer = ByteWriter(capacity: EntryFormat.fixedHeaderSize + payload.count + 128)
    do { try EntryFormat.encodeBody(entry, timestamp: timestamp, into: &writer) } catch {
      throw fail(seq, "\(error)")
    }
    let computed = writer.bytes.withUnsafeBytes { Chain.hash(previous: previous.hash, seq: seq, body: $0) }
    guard computed == hash else {
      throw fail(seq, "the recomputed hash differs from the exported one: the line or an earlier one was changed")
    }
    writer.append(hash)
    previous = ChainAnchor(seq: seq, hash: hash)
    if listedSnapshots.contains(seq) { snapshotHashes[seq] = hash }
    entriesRead += 1
    return writer.bytes
  }

  private mutating func snapshotValue(_ line: ExportFormat.Line) throws -> (UInt64, [UInt8]) {
    guard let seq = line.seq else { throw fail(nil, "a snapshot line without 'seq'") }
    guard listedSnapshots.contains(seq), !snapshotsRead.contains(seq) else {
      throw fail(nil, "snapshot \(seq) is not listed in the header (or repeated)")
    }
    guard let base64 = line.valueBase64, let data = Data(base64Encoded: base64) else {
      throw fail(nil, "snapshot \(seq) has no valid 'valueBase64'")
    }
    let value = Array(data)
    let snapshot: Snapshot
    do { snapshot = try value.withUnsafeBytes { try SnapshotFormat.decode(seq: seq, value: $0) } } catch {
      throw fail(nil, "snapshot \(seq) is corrupt: \(error)")
    }
    let expected = seq == header.meta.anchor.seq ? header.meta.anchor.hash : snapshotHashes[seq]
    guard let expected, expected == snapshot.chainHash else {
      throw fail(nil, "snapshot \(seq) does not match the hash of entry \(seq)")
    }
    snapshotsRead.append(seq)
    return (seq, value)
  }
}
