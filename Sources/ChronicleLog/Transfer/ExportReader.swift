import Foundation
import ChronicleLMDB

/// Reads an export line by line, checking everything: the shared core of
/// ``ActionLog/checkExport(at:progress:)`` and ``ActionLog/importLog(from:into:progress:)``.
struct ExportReader {
  enum Item {
    /// A stored tree hash left of the anchor.
    case tree(TreeStorage.Node, hash: [UInt8])
    /// An entry's stored value, and the subtrees of ``TreeStorage/storedLevel`` and more its leaf
    /// completes (empty when the export cannot tell the tree: a version-1 export of a compacted log).
    case entry(seq: UInt64, value: [UInt8], completed: [MerkleFrontier.Completed])
    case snapshot(seq: UInt64, value: [UInt8], line: Int)
    /// A stored checkpoint whose root the reader checked against the exported tree.
    case checkpoint(size: UInt64, note: [UInt8])
  }

  struct Header {
    var meta: LogMeta
    var entries: Int
    var snapshots: [UInt64]
    var head: ChainAnchor
    /// The log's identifier; `nil` in a version-1 export.
    var logID: [UInt8]?
    /// The number of tree lines.
    var tree: Int
    /// The sizes of the checkpoint lines, ascending.
    var checkpoints: [UInt64]
    /// Whether the exported log is encrypted (format 2): its entry lines carry the stored ciphertext.
    var encrypted: Bool { meta.formatVersion >= ActionLog.encryptedFormatVersion }
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
  /// The tree lines read, and the last one's node (they come in key order).
  private var treeHashes: [TreeStorage.Node: [UInt8]] = [:]
  private var lastTreeNode: TreeStorage.Node?
  /// Whether the tree lines are over (the first other line, or the end, was reached).
  private var treeDone = false
  /// The Merkle frontier of the entries read so far (`nil` when the export cannot tell the tree).
  private var frontier: MerkleFrontier?
  /// The roots of the tree at the listed checkpoint sizes, as they are reached.
  private var roots: [UInt64: [UInt8]] = [:]
  private let listedCheckpoints: Set<UInt64>
  private(set) var checkpointsRead: [UInt64] = []

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
    guard version <= ActionLog.encryptedExportFormatVersion else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil,
        reason: "export format \(version) is newer than this version reads (\(ActionLog.encryptedExportFormatVersion))")
    }
    guard let format = line.formatVersion else { throw missing("formatVersion") }
    guard format <= ActionLog.encryptedFormatVersion else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil,
        reason: "written in log format \(format); this version reads format \(ActionLog.encryptedFormatVersion) and older")
    }
    let encrypted = format >= ActionLog.encryptedFormatVersion
    guard encrypted == (version >= ActionLog.encryptedExportFormatVersion) else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil,
        reason: encrypted
          ? "an encrypted log (format \(format)) in export format \(version): its export has version \(ActionLog.encryptedExportFormatVersion)"
          : "export format \(version) holds an encrypted log, but the header's log format is \(format)")
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
    // The entries the header names must be the ones it counts: from the anchor's successor to the head.
    let counted = head.seq >= anchor.seq && UInt64(entries) == head.seq - anchor.seq
    let firstSeq = entries == 0 ? nil : anchor.seq + 1
    let lastSeq = entries == 0 ? nil : head.seq
    guard counted, line.first == nil || line.first == firstSeq, line.last == nil || line.last == lastSeq else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil,
        reason: "the header's entries (\(entries)), first (\(line.first.map(String.init) ?? "none")), last "
          + "(\(line.last.map(String.init) ?? "none")) and head (\(head.seq)) do not agree with its anchor (\(anchor.seq))")
    }
    var logID: [UInt8]?
    var treeCount = 0
    var checkpoints: [UInt64] = []
    if version >= 2 {
      if let text = line.logID {
        guard let id = [UInt8](hex: text), id.count == 16 else { throw missing("logID") }
        logID = id
      }
      guard let count = line.tree, count >= 0 else { throw missing("tree") }
      guard let sizes = line.checkpoints, zip(sizes, sizes.dropFirst()).allSatisfy({ $0 < $1 }) else {
        throw missing("checkpoints")
      }
      guard sizes.isEmpty || logID != nil else {
        throw LogError.invalidExport(
          path: path, line: 1, seq: nil, reason: "the header lists checkpoints but no 'logID' to name their log")
      }
      treeCount = count
      checkpoints = sizes
    }
    guard !encrypted || logID != nil else {
      throw LogError.invalidExport(
        path: path, line: 1, seq: nil, reason: "an encrypted log's export without 'logID', which its records are bound to")
    }
    let meta = LogMeta(
      formatVersion: format, appID: appID, schemaVersion: schema, created: created,
      anchor: ChainAnchor(seq: anchor.seq, hash: anchorHash))
    header = Header(
      meta: meta, entries: entries, snapshots: snapshots, head: ChainAnchor(seq: head.seq, hash: headHash),
      logID: logID, tree: treeCount, checkpoints: checkpoints)
    listedSnapshots = Set(snapshots)
    listedCheckpoints = Set(checkpoints)
    previous = meta.anchor
  }

  /// What was read so far, as a report.
  var report: TransferReport {
    TransferReport(
      path: path, meta: header.meta,
      range: entriesRead > 0 ? (header.meta.anchor.seq + 1)...previous.seq : nil, entries: entriesRead,
      snapshots: snapshotsRead, head: previous, bytes: lines.bytesRead, logID: header.logID,
      checkpoints: checkpointsRead, treeHashes: treeHashes.count)
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
      if line.record != "tree" { try endTree() }
      switch line.record {
      case "tree":
        let (node, hash) = try treeValue(line)
        return .tree(node, hash: hash)
      case "entry":
        let (value, completed) = try entryValue(line)
        return .entry(seq: line.seq ?? 0, value: value, completed: completed)
      case "snapshot":
        let (seq, value) = try snapshotValue(line)
        return .snapshot(seq: seq, value: value, line: lineNumber)
      case "checkpoint":
        let (size, note) = try checkpointValue(line)
        return .checkpoint(size: size, note: note)
      default:
        throw fail(line.seq, "'record' must be \"tree\", \"entry\", \"snapshot\" or \"checkpoint\"")
      }
    }
    try endTree()
    return nil
  }

  /// After the last tree line: checks their number and sets up the frontier of the anchor, from
  /// which the entries' leaves extend the tree (empty for an anchor of 0; unknown for an export
  /// of a compacted log without tree lines, which then can carry no checkpoint).
  private mutating func endTree() throws {
    guard !treeDone else { return }
    treeDone = true
    guard treeHashes.count == header.tree else {
      throw fail(nil, "the header promises \(header.tree) tree lines, the file holds \(treeHashes.count)")
    }
    let anchor = header.meta.anchor.seq
    if anchor == 0 {
      frontier = MerkleFrontier()
    } else if !treeHashes.isEmpty {
      let stored = treeHashes
      var missing: TreeStorage.Node?
      frontier = try? MerkleFrontier(size: anchor) { level, index in
        guard let hash = TreeStorage.lookup(stored, level: level, index: index) else {
          missing = TreeStorage.Node(level: level, index: index)
          throw TreeError.outOfRange("missing")
        }
        return hash
      }
      if let missing {
        throw fail(
          nil,
          "the tree lines lack the hash of entries \(missing.index << UInt64(missing.level) + 1)…\(missing.end) "
            + "(level \(missing.level), index \(missing.index)) that the anchor's frontier needs")
      }
    }
    roots[0] = MerkleHash.emptyRoot
    if let frontier { roots[anchor] = frontier.root }
    for size in header.checkpoints where size > 0 && size < anchor {
      let stored = treeHashes
      roots[size] = try? MerkleTree.root(size: size) { level, index in
        guard let hash = TreeStorage.lookup(stored, level: level, index: index) else {
          throw TreeError.outOfRange("missing")
        }
        return hash
      }
    }
  }

  private mutating func treeValue(_ line: ExportFormat.Line) throws -> (TreeStorage.Node, [UInt8]) {
    guard !treeDone else { throw fail(nil, "a tree line after an entry or snapshot: tree lines follow the header") }
    guard let level = line.level, (0..<64).contains(level), let index = line.index else {
      throw fail(nil, "a tree line without a valid 'level' (0…63) and 'index'")
    }
    let node = TreeStorage.Node(level: level, index: index)
    guard index < UInt64.max >> UInt64(level), node.end <= header.meta.anchor.seq else {
      throw fail(nil, "the tree hash at level \(level), index \(index) does not lie left of the anchor")
    }
    guard lastTreeNode.map({ $0 < node }) ?? true else {
      throw fail(nil, "the tree hash at level \(level), index \(index) is out of order (or repeated)")
    }
    guard let text = line.hash, let hash = [UInt8](hex: text), hash.count == MerkleHash.size else {
      throw fail(nil, "the tree hash at level \(level), index \(index) has no valid 'hash' (64 hex digits)")
    }
    lastTreeNode = node
    treeHashes[node] = hash
    return (node, hash)
  }

  private mutating func checkpointValue(_ line: ExportFormat.Line) throws -> (UInt64, [UInt8]) {
    guard let size = line.size, let text = line.note else {
      throw fail(nil, "a checkpoint line without 'size' and 'note'")
    }
    guard listedCheckpoints.contains(size), !checkpointsRead.contains(size),
      checkpointsRead.last.map({ $0 < size }) ?? true
    else {
      throw fail(nil, "the checkpoint of size \(size) is not listed in the header (or repeated, or out of order)")
    }
    let note = Array(text.utf8)
    let checkpoint: Checkpoint
    do { checkpoint = try Checkpoint(parsing: try SignedNote(parsing: note).text) } catch {
      throw fail(nil, "the checkpoint of size \(size): \(error)")
    }
    guard checkpoint.size == size else {
      throw fail(nil, "the checkpoint line of size \(size) holds a checkpoint of size \(checkpoint.size)")
    }
    let origin = ActionLog.origin(appID: header.meta.appID, logID: header.logID ?? [])
    guard checkpoint.origin == origin else {
      throw fail(nil, "the checkpoint of size \(size) is of '\(checkpoint.origin)', not of this log ('\(origin)')")
    }
    guard size <= previous.seq else {
      throw fail(nil, "the checkpoint of size \(size) covers more entries than the export holds (\(previous.seq))")
    }
    guard let root = roots[size] else {
      throw fail(
        nil, "the checkpoint of size \(size) cannot be checked: the export holds no tree hashes that commit to its entries")
    }
    guard root == checkpoint.rootHash else {
      throw fail(nil, "the checkpoint of size \(size) does not match the tree of the exported entries")
    }
    checkpointsRead.append(size)
    return (size, note)
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
    guard checkpointsRead == header.checkpoints else {
      throw LogError.invalidExport(
        path: path, line: lineNumber, seq: nil,
        reason: "the header promises checkpoints of sizes \(header.checkpoints), the file holds \(checkpointsRead)")
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

  private mutating func entryValue(_ line: ExportFormat.Line) throws -> ([UInt8], [MerkleFrontier.Completed]) {
    guard let seq = line.seq else { throw fail(nil, "an entry line without 'seq'") }
    guard snapshotsRead.isEmpty, checkpointsRead.isEmpty else {
      throw fail(seq, "an entry after the snapshots or checkpoints: entries come first")
    }
    guard previous.seq < UInt64.max, seq == previous.seq + 1 else {
      guard previous.seq < UInt64.max else { throw fail(seq, "out of sequence: no entry can follow \(previous.seq)") }
      throw fail(seq, "out of sequence: expected entry \(previous.seq + 1)")
    }
    if header.encrypted || line.sealedBase64 != nil { return try sealedEntryValue(line, seq: seq) }
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
    // What the engine refuses to open is refused here too: a jump must name an earlier entry.
    do { try ActionLog.checkJump(entry, seq: seq) } catch {
      guard case .invalidEntry(let reason) = error else { throw error }
      throw fail(seq, reason + ": the app could not open the log")
    }
    writer.append(hash)
    return (writer.bytes, record(seq: seq, value: writer.bytes, hash: hash))
  }

  /// An entry line of an encrypted log: its stored value (`sealedBase64` and `hash`), whose clear
  /// header must say what the line's fields say; the ciphertext is carried, never opened.
  private mutating func sealedEntryValue(_ line: ExportFormat.Line, seq: UInt64) throws
    -> ([UInt8], [MerkleFrontier.Completed])
  {
    guard header.encrypted else {
      throw fail(seq, "an encrypted entry ('sealedBase64') in the export of a log in the clear")
    }
    guard let base64 = line.sealedBase64, let body = Data(base64Encoded: base64) else {
      throw fail(seq, "no valid 'sealedBase64': an encrypted log's entry lines carry the stored value")
    }
    guard let hashText = line.hash, let hash = [UInt8](hex: hashText), hash.count == 32 else {
      throw fail(seq, "no valid 'hash' (64 hex digits)")
    }
    let value = Array(body) + hash
    var parsed: (EntryKind, UInt8, PayloadCodec, UInt32, Int64, String, UInt32)?
    var problem = "it holds an entry in the clear (layout 1)"
    value.withUnsafeBytes { buffer in
      do {
        let view = try EntryFormat.parse(buffer, seq: seq)
        guard let sealed = view.sealed else { return }
        parsed = (
          view.kind, view.flags.rawValue, view.codec, view.schemaVersion, view.timestamp, view.typeName, sealed.keyID
        )
      } catch {
        problem = "\(error)"
      }
    }
    guard let fields = parsed else { throw fail(seq, "'sealedBase64' is not an encrypted entry: \(problem)") }
    let (kind, flags, codec, schema, timestamp, typeName, keyID) = fields
    let clear: [(String, Bool)] = [
      ("kind", line.kind == kind.description), ("flags", line.flags == flags), ("codec", line.codec == codec.description),
      ("schemaVersion", line.schemaVersion == schema), ("timestamp", line.timestamp == timestamp),
      ("typeName", (line.typeName ?? "") == typeName), ("keyID", line.keyID == EncryptionKey.text(keyID)),
    ]
    if let field = clear.first(where: { !$0.1 })?.0 {
      throw fail(seq, "'\(field)' differs from the stored value's clear header in 'sealedBase64'")
    }
    let computed = value.withUnsafeBytes {
      Chain.hash(previous: previous.hash, seq: seq, body: UnsafeRawBufferPointer(rebasing: $0[..<body.count]))
    }
    guard computed == hash else {
      throw fail(seq, "the recomputed hash differs from the exported one: the line or an earlier one was changed")
    }
    return (value, record(seq: seq, value: value, hash: hash))
  }

  /// Records a checked entry: the chain's new head, its leaf in the tree; the subtrees it completes.
  private mutating func record(seq: UInt64, value: [UInt8], hash: [UInt8]) -> [MerkleFrontier.Completed] {
    previous = ChainAnchor(seq: seq, hash: hash)
    if listedSnapshots.contains(seq) { snapshotHashes[seq] = hash }
    entriesRead += 1
    var completed: [MerkleFrontier.Completed] = []
    if frontier != nil {
      completed = frontier!.append(leaf: MerkleHash.leaf(seq: seq, value: value))
      completed.removeAll { $0.level < TreeStorage.storedLevel }
      if listedCheckpoints.contains(seq) { roots[seq] = frontier!.root }
    }
    return completed
  }

  private mutating func snapshotValue(_ line: ExportFormat.Line) throws -> (UInt64, [UInt8]) {
    guard let seq = line.seq else { throw fail(nil, "a snapshot line without 'seq'") }
    guard checkpointsRead.isEmpty else { throw fail(seq, "a snapshot after the checkpoints: snapshots come first") }
    guard listedSnapshots.contains(seq), !snapshotsRead.contains(seq) else {
      throw fail(nil, "snapshot \(seq) is not listed in the header (or repeated)")
    }
    guard let base64 = line.valueBase64, let data = Data(base64Encoded: base64) else {
      throw fail(nil, "snapshot \(seq) has no valid 'valueBase64'")
    }
    let value = Array(data)
    let snapshot: Snapshot
    guard value.first == (header.encrypted ? SnapshotFormat.sealedLayoutVersion : SnapshotFormat.layoutVersion) else {
      throw fail(
        nil,
        header.encrypted
          ? "snapshot \(seq) is in the clear in the export of an encrypted log"
          : "snapshot \(seq) is encrypted in the export of a log in the clear")
    }
    do {
      // An encrypted snapshot is carried as stored: its checksum and chain hash check without the key.
      snapshot = try value.withUnsafeBytes { try SnapshotFormat.decode(seq: seq, value: $0, sealedAsEmpty: true) }
    } catch {
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
