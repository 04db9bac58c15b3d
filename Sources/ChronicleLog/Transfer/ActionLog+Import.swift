import Foundation
import LMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - Reports and errors

/// What an export file holds: written by ``ActionLog/export(to:through:progress:)``,
/// read back by ``ActionLog/checkExport(at:progress:)`` and ``ActionLog/importLog(from:into:progress:)``.
///
/// ```swift
/// let written = try log.export(to: URL(fileURLWithPath: "ledger.jsonl"))
/// let read = try ActionLog.checkExport(at: URL(fileURLWithPath: "ledger.jsonl"))
/// assert(read.head == written.head)
/// ```
public struct TransferReport: Sendable, Hashable {
  /// The export file (or, for an import, the new log's directory); `nil` for a streamed export.
  public var path: String?
  /// The meta data the export carries: format, app, schema, created time and the anchor its chain starts from.
  public var meta: LogMeta
  /// The first and last sequence numbers of its entries, `nil` when it holds none.
  public var range: ClosedRange<UInt64>?
  /// The number of entries.
  public var entries: Int
  /// The sequence numbers of its snapshots, ascending.
  public var snapshots: [UInt64]
  /// The last entry's sequence number and hash (the anchor when there are no entries).
  public var head: ChainAnchor
  /// The size of the export in bytes.
  public var bytes: Int
}

/// The former name of the errors of exports and imports: they throw ``LogError`` now, like every
/// operation on a log (``LogError/invalidExport(path:line:seq:reason:)``,
/// ``LogError/destinationExists(path:reason:)``, ``LogError/io(path:operation:reason:)``).
@available(*, deprecated, renamed: "LogError")
public typealias TransferError = LogError

/// A temporary file or directory an interrupted import or compaction left behind:
/// ``ActionLog/leftovers(of:)`` lists them, `logtool info` reports them.
public struct TransferLeftover: Sendable, Hashable {
  /// What made it.
  public enum Origin: String, Sendable, Hashable {
    /// An import's hidden directory beside the log, `.NAME.import-PID-RANDOM`.
    case `import`
    /// A compaction's work directory inside the log, `.compact-tmp`.
    case compaction
  }

  /// Its path.
  public var path: String
  /// What made it.
  public var origin: Origin
  /// The bytes of the files in it.
  public var bytes: Int
  /// The process that made it, when its name says.
  public var pid: Int32?
  /// Whether that process still runs; `nil` when unknown.
  public var creatorRunning: Bool?
}

// MARK: - Export

extension ActionLog {
  /// The version of the export format (`"chronicleExport"` in an export's header line).
  public static let exportFormatVersion = 1

  /// Writes the log (or its entries up to `lastSeq`) as a Chronicle export: JSON Lines,
  /// lossless, re-importable byte for byte. `docs/logtool.md` specifies the format.
  ///
  /// The file appears complete or not at all: it is written beside `file` as
  /// `NAME.partial`, synced, and renamed into place. An existing `file` is never replaced.
  /// `NAME.partial` is created exclusively and never through a symbolic link; one left by
  /// a killed export (a regular file of this user, holding the start of an export or
  /// nothing, that no process is writing) is replaced, anything else there is refused.
  /// Everything is read in one read transaction, so the export is a consistent
  /// picture of the log even while a writer appends. Every entry's hash is checked
  /// on the way: a log that does not verify is not exported.
  ///
  /// - Parameters:
  ///   - file: the file to create.
  ///   - lastSeq: export entries up to this sequence number only (and the snapshots up to it); `nil` for all.
  ///   - progress: called now and then with (entries written, entries to write).
  /// - Throws: ``LogError``: ``LogError/destinationExists(path:reason:)`` and
  ///   ``LogError/io(path:operation:reason:)`` for file problems, the other cases for problems of the log.
  @discardableResult
  public func export(
    to file: URL, through lastSeq: UInt64? = nil, progress: ((Int, Int) -> Void)? = nil
  ) throws -> TransferReport {
    let path = file.standardizedFileURL.path
    if FileManager.default.fileExists(atPath: path) {
      throw LogError.destinationExists(path: path, reason: "already exists: an export never replaces a file")
    }
    let partial = path + ".partial"
    var output = try DurableFile(creatingExclusively: partial, staleIf: DurableFile.isExportStart)
    var report: TransferReport
    do {
      report = try export(through: lastSeq, progress: progress) { chunk in try output.write(chunk) }
      try output.syncAndClose()
      try DurableFile.publish(partial, as: path)
    } catch {
      output.close()
      unlink(partial)
      throw error
    }
    report.path = path
    return report
  }

  /// Streams the export to `write`, in chunks of about a mebibyte; otherwise as ``export(to:through:progress:)``.
  ///
  /// - Throws: ``LogError``, or what `write` threw, unchanged.
  @discardableResult
  public func export(
    through lastSeq: UInt64? = nil, progress: ((Int, Int) -> Void)? = nil, write: ([UInt8]) throws -> Void
  ) throws -> TransferReport {
    try ensureOpen()
    let meta = try meta()
    var writeError: (any Error)?
    func forward(_ chunk: [UInt8]) throws {
      do { try write(chunk) } catch {
        writeError = error
        throw error
      }
    }
    do {
      return try storage { try exportBody(meta: meta, through: lastSeq, progress: progress, write: forward) }
    } catch {
      if let writeError { throw writeError }
      throw error
    }
  }

  private func exportBody(
    meta: LogMeta, through lastSeq: UInt64?, progress: ((Int, Int) -> Void)?, write: ([UInt8]) throws -> Void
  ) throws -> TransferReport {
    try environment.read { txn in
      let anchorValue = try txn.get(forKey: Array(MetaKey.anchor.utf8), in: metaDB)
      guard anchorValue == ExportFormat.anchorBytes(meta.anchor) else {
        throw LogError.corruptMeta(path: path, reason: "the anchor changed during the export (compacted meanwhile?)")
      }
      let plan = try exportPlan(txn, meta: meta, through: lastSeq)
      var out = JSONWriter()
      out.bytes.reserveCapacity(1 << 20 + 65_536)
      ExportFormat.writeHeader(meta: meta, plan: plan, into: &out)
      var bytes = 0
      func flush(force: Bool) throws {
        guard force || out.bytes.count >= 1 << 20 else { return }
        bytes += out.bytes.count
        try write(out.bytes)
        out.bytes.removeAll(keepingCapacity: true)
      }
      var snapshotHashes: [UInt64: [UInt8]] = [:]
      let snapshotSeqs = Set(plan.snapshots)
      if let range = plan.range {
        try txn.withCursor(on: entriesDB) { cursor in
          var previous = meta.anchor.hash
          var expected = range.lowerBound
          var item = try withSequenceKey(range.lowerBound) { try cursor.seek(atLeast: $0) }
          var computed = [UInt8](repeating: 0, count: 32)
          var finished = false
          while let (key, value) = item {
            let seq = try decodeKey(key)
            guard seq == expected else {
              throw LogError.corruptEntry(path: path, seq: expected, reason: "missing: the next entry found is \(seq)")
            }
            let view: EntryFormat.View
            do { view = try EntryFormat.parse(value) } catch {
              throw LogError.corruptEntry(path: path, seq: seq, reason: "\(error)")
            }
            previous.withUnsafeBytes { prev in
              computed.withUnsafeMutableBytes { Chain.hash(previous: prev, seq: seq, body: view.body, into: $0) }
            }
            guard computed.elementsEqual(view.hash) else {
              throw LogError.corruptEntry(
                path: path, seq: seq, reason: "hash mismatch: the log does not verify, so it is not exported")
            }
            previous = computed
            if snapshotSeqs.contains(seq) { snapshotHashes[seq] = computed }
            do { try ExportFormat.writeEntry(seq: seq, view: view, into: &out) } catch {
              throw LogError.corruptEntry(path: path, seq: seq, reason: "\(error)")
            }
            try flush(force: false)
            let done = Int(clamping: seq - range.lowerBound + 1)
            if done % 16_384 == 0 { progress?(done, plan.entries) }
            if seq == range.upperBound {
              finished = true
              break
            }
            expected = seq + 1
            item = try cursor.next()
          }
          guard finished else {
            throw LogError.corruptEntry(path: path, seq: expected, reason: "missing: the log ends before it")
          }
        }
      }
      for seq in plan.snapshots {
        let value = try withSequenceKey(seq) { key in try txn.withValue(forKey: key, in: snapshotsDB) { Array($0) } }
        guard let value else { continue }
        let snapshot: Snapshot
        do { snapshot = try value.withUnsafeBytes { try SnapshotFormat.decode(seq: seq, value: $0) } } catch {
          throw LogError.corruptSnapshot(path: path, seq: seq, reason: "\(error)")
        }
        let expected = seq == meta.anchor.seq ? meta.anchor.hash : snapshotHashes[seq]
        guard snapshot.chainHash == expected else {
          throw LogError.corruptSnapshot(
            path: path, seq: seq, reason: "its chain hash differs from entry \(seq)'s hash")
        }
        ExportFormat.writeSnapshot(snapshot, value: value, into: &out)
      }
      try flush(force: true)
      progress?(plan.entries, plan.entries)
      return TransferReport(
        path: nil, meta: meta, range: plan.range, entries: plan.entries, snapshots: plan.snapshots, head: plan.head,
        bytes: bytes)
    }
  }

  /// Which entries and snapshots an export covers, read inside its transaction.
  private func exportPlan(_ txn: Transaction, meta: LogMeta, through lastSeq: UInt64?) throws -> ExportFormat.Plan {
    let upperLimit = lastSeq ?? .max
    let last: (seq: UInt64, hash: [UInt8])? = try txn.withCursor(on: entriesDB) { cursor in
      guard let (key, value) = try withSequenceKey(upperLimit, { try cursor.seek(atMost: $0) }) else { return nil }
      let seq = try decodeKey(key)
      guard seq <= upperLimit, seq > meta.anchor.seq else { return nil }
      guard value.count >= EntryFormat.hashSize else {
        throw LogError.corruptEntry(path: path, seq: seq, reason: "value of \(value.count) bytes holds no hash")
      }
      return (seq, Array(value.suffix(EntryFormat.hashSize)))
    }
    let range = last.map { (meta.anchor.seq + 1)...$0.seq }
    let snapshotLimit = last?.seq ?? meta.anchor.seq
    let snapshots: [UInt64] = try txn.withCursor(on: snapshotsDB) { cursor in
      var seqs: [UInt64] = []
      var item = try withSequenceKey(meta.anchor.seq) { try cursor.seek(atLeast: $0) }
      while let (key, _) = item {
        let seq = try decodeKey(key)
        guard seq <= snapshotLimit else { break }
        seqs.append(seq)
        item = try cursor.next()
      }
      return seqs
    }
    return ExportFormat.Plan(
      range: range, entries: range.map { Int(clamping: $0.upperBound - $0.lowerBound + 1) } ?? 0, snapshots: snapshots,
      head: last.map { ChainAnchor(seq: $0.seq, hash: $0.hash) } ?? meta.anchor)
  }
}

// MARK: - Import and checking

extension ActionLog {
  /// Reads an export and checks it completely without writing anything: the header,
  /// every line's fields, every entry's recomputed hash against the exported one,
  /// every snapshot's checksum and tie to the chain, and the counts and head the header promises.
  ///
  /// - Throws: ``LogError/invalidExport(path:line:seq:reason:)`` naming the first bad line,
  ///   ``LogError/io(path:operation:reason:)`` when the file cannot be read.
  @discardableResult
  public static func checkExport(at file: URL, progress: ((Int, Int) -> Void)? = nil) throws -> TransferReport {
    var reader = try ExportReader(path: file.standardizedFileURL.path)
    while let item = try reader.next() {
      if case .entry = item, reader.entriesRead % 16_384 == 0 { progress?(reader.entriesRead, reader.header.entries) }
    }
    try reader.finish()
    progress?(reader.entriesRead, reader.header.entries)
    return reader.report
  }

  /// Rebuilds a log from an export made by ``export(to:through:progress:)``: entries,
  /// hashes, meta (app, schema, created, anchor) and snapshots come out byte-identical
  /// to the log that was exported.
  ///
  /// The log is built in a hidden directory beside `directory`, `.NAME.import-PID-RANDOM`,
  /// checked with ``verify(progress:)``, and renamed into place only when complete: a failed
  /// import leaves no half-built log behind. A killed one leaves its hidden directory, which
  /// the next import into the same place removes once the process that made it is gone
  /// (``leftovers(of:)`` lists them; `logtool info` reports them).
  ///
  /// - Parameters:
  ///   - file: the export.
  ///   - directory: where the new log goes; it must not exist or be an empty directory.
  ///   - progress: called now and then with (entries imported, entries in the export).
  /// - Throws: ``LogError``: ``LogError/invalidExport(path:line:seq:reason:)`` for a bad export
  ///   line (naming its line and seq), ``LogError/destinationExists(path:reason:)`` for an unusable
  ///   destination, the storage cases for problems writing the new log.
  @discardableResult
  public static func importLog(
    from file: URL, into directory: URL, progress: ((Int, Int) -> Void)? = nil
  ) throws -> TransferReport {
    let destination = directory.standardizedFileURL.path
    try checkImportDestination(destination)
    var reader = try ExportReader(path: file.standardizedFileURL.path)
    let parent = (destination as NSString).deletingLastPathComponent
    let name = (destination as NSString).lastPathComponent
    do {
      try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
    } catch {
      throw LogError.io(path: parent, operation: "create the directory", reason: "\(error.localizedDescription)")
    }
    removeImportLeftovers(parent: parent, name: name)
    let temporary = parent + "/" + importTemporaryPrefix(name) + "\(getpid())-\(UUID().uuidString.prefix(8))"
    var completed = false
    defer { if !completed { try? FileManager.default.removeItem(atPath: temporary) } }
    do {
      return try buildImport(
        reader: &reader, temporary: temporary, destination: destination, parent: parent, progress: progress,
        completed: &completed)
    } catch LogError.fileTooLarge(_, let limit) {
      throw LogError.fileTooLarge(path: destination + "/" + LogDirectory.dataFile, limit: limit)
    }
  }

  private static func buildImport(
    reader: inout ExportReader, temporary: String, destination: String, parent: String,
    progress: ((Int, Int) -> Void)?, completed: inout Bool
  ) throws -> TransferReport {

    let header = reader.header
    let log = try ActionLog(
      directory: URL(fileURLWithPath: temporary), access: .readWrite,
      options: Options(
        durability: .normal, flushInterval: nil, appID: header.meta.appID, schemaVersion: header.meta.schemaVersion))
    defer { try? log.close() }
    var metaWritten = false
    var batch: [(UInt64, [UInt8])] = []
    batch.reserveCapacity(4096)
    var snapshots: [(UInt64, [UInt8], line: Int)] = []
    func flush() throws(LogError) {
      guard !batch.isEmpty || !metaWritten else { return }
      try storage {
        try log.environment.write { txn in
          if !metaWritten { try ExportFormat.putMeta(header.meta, txn: txn, db: log.metaDB) }
          for (seq, value) in batch {
            try withSequenceKey(seq) { key in
              try value.withUnsafeBytes { try txn.put($0, forKey: key, in: log.entriesDB, flags: .append) }
            }
          }
        }
      }
      metaWritten = true
      batch.removeAll(keepingCapacity: true)
    }
    try flush()
    while let item = try reader.next() {
      switch item {
      case .entry(let seq, let value):
        batch.append((seq, value))
        if batch.count == 4096 {
          try flush()
          progress?(reader.entriesRead, header.entries)
        }
      case .snapshot(let seq, let value, let line):
        snapshots.append((seq, value, line))
      }
    }
    try reader.finish()
    try flush()
    progress?(reader.entriesRead, header.entries)
    if !snapshots.isEmpty {
      try storage {
        try log.environment.write { txn in
          for (seq, value, _) in snapshots {
            try withSequenceKey(seq) { key in
              try value.withUnsafeBytes { try txn.put($0, forKey: key, in: log.snapshotsDB) }
            }
          }
        }
      }
    }
    let verification = try log.verify()
    guard verification.isValid else {
      let problem = verification.problems.first.map { "\($0)" } ?? "unknown problem"
      throw LogError.invalidExport(
        path: reader.path, line: 0, seq: verification.firstBadSeq,
        reason: "the rebuilt log does not verify: \(problem)")
    }
    try log.close()
    if rename(temporary, destination) != 0 {
      let code = errno
      throw code == ENOTEMPTY || code == EEXIST
        ? LogError.destinationExists(path: destination, reason: "is not empty: an import builds a new log")
        : LogError.io(
          path: destination, operation: "move the imported log to", reason: String(cString: strerror(code)))
    }
    completed = true
    DurableFile.syncDirectory(parent)
    var report = reader.report
    report.path = destination
    return report
  }

  /// The start of the names of the hidden directories an import into `name` builds in.
  static func importTemporaryPrefix(_ name: String) -> String { ".\(name).import-" }

  /// Removes the hidden directories of killed imports into `parent/name`: those whose name
  /// carries the id of a process that no longer runs.
  private static func removeImportLeftovers(parent: String, name: String) {
    for leftover in importLeftovers(parent: parent, name: name) where leftover.creatorRunning == false {
      try? FileManager.default.removeItem(atPath: leftover.path)
    }
  }

  /// The temporary files and directories interrupted imports into `directory` and an
  /// interrupted compaction of it left behind: `.NAME.import-*` beside it and
  /// `.compact-tmp` inside it. The next import into the same place removes the first
  /// (once the process that made one is gone), the next compaction the second.
  ///
  /// ```swift
  /// for leftover in ActionLog.leftovers(of: url) { print(leftover.path, leftover.bytes) }
  /// ```
  public static func leftovers(of directory: URL) -> [TransferLeftover] {
    let path = directory.standardizedFileURL.path
    var found = importLeftovers(
      parent: (path as NSString).deletingLastPathComponent, name: (path as NSString).lastPathComponent)
    let work = path + "/" + compactionDirectoryName
    var status = stat()
    if lstat(work, &status) == 0 {
      found.append(
        TransferLeftover(path: work, origin: .compaction, bytes: diskUsage(work), pid: nil, creatorRunning: nil))
    }
    return found
  }

  private static func importLeftovers(parent: String, name: String) -> [TransferLeftover] {
    let prefix = importTemporaryPrefix(name)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.isEmpty ? "." : parent)) ?? []
    return names.filter { $0.hasPrefix(prefix) }.sorted().map { entry in
      let path = parent + "/" + entry
      // `.NAME.import-PID-RANDOM`; older versions wrote `.NAME.import-RANDOM`, whose maker is unknown.
      let parts = entry.dropFirst(prefix.count).split(separator: "-")
      var pid: Int32?
      var running: Bool?
      if parts.count == 2, let number = Int32(parts[0]), number > 0 {
        pid = number
        running = number == getpid() || kill(number, 0) == 0 || errno != ESRCH
      }
      return TransferLeftover(path: path, origin: .import, bytes: diskUsage(path), pid: pid, creatorRunning: running)
    }
  }

  /// The bytes of the regular files under `path` (not following symbolic links).
  private static func diskUsage(_ path: String) -> Int {
    var status = stat()
    guard lstat(path, &status) == 0 else { return 0 }
    guard (status.st_mode & S_IFMT) == S_IFDIR else {
      return (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : 0
    }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.reduce(0) { $0 + diskUsage(path + "/" + $1) }
  }

  private static func checkImportDestination(_ path: String) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
    guard isDirectory.boolValue else {
      throw LogError.destinationExists(path: path, reason: "is a file: an import builds a new log directory")
    }
    let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    guard contents.isEmpty else {
      throw LogError.destinationExists(
        path: path,
        reason:
          "is not empty (holds \(contents.sorted().prefix(3).joined(separator: ", "))): an import builds a new log")
    }
  }
}

// MARK: - The format

/// The JSON Lines layout of an export. `docs/logtool.md` is the specification.
enum ExportFormat {
  struct Plan {
    var range: ClosedRange<UInt64>?
    var entries: Int
    var snapshots: [UInt64]
    var head: ChainAnchor
  }

  /// A short reason for a line that did not decode.
  static func describe(_ error: any Error) -> String {
    func field(_ path: [any CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
    switch error as? DecodingError {
    case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
      return "'\(field(context.codingPath))' has the wrong type or is out of range"
    case .dataCorrupted(let context)? where !context.codingPath.isEmpty:
      return "'\(field(context.codingPath))' has the wrong type or is out of range"
    default:
      return "not a valid JSON object"
    }
  }

  static func anchorBytes(_ anchor: ChainAnchor) -> [UInt8] {
    var writer = ByteWriter(capacity: 40)
    writer.append(bigEndian: anchor.seq)
    writer.append(anchor.hash)
    return writer.bytes
  }

  static func writeHeader(meta: LogMeta, plan: Plan, into out: inout JSONWriter) {
    out.beginObject()
    out.field("chronicleExport", ActionLog.exportFormatVersion)
    out.field("formatVersion", Int(meta.formatVersion))
    out.field("appID", meta.appID)
    out.field("schemaVersion", Int(meta.schemaVersion))
    out.field("created", Int(meta.created))
    out.field("createdTime", ISOTime.string(micros: meta.created))
    writeAnchor("anchor", meta.anchor, into: &out)
    out.field("entries", plan.entries)
    if let range = plan.range {
      out.field("first", range.lowerBound)
      out.field("last", range.upperBound)
    }
    out.key("snapshots")
    out.beginArray()
    for seq in plan.snapshots { out.uint(seq) }
    out.endArray()
    writeAnchor("head", plan.head, into: &out)
    out.endObject()
    out.newline()
  }

  private static func writeAnchor(_ name: String, _ anchor: ChainAnchor, into out: inout JSONWriter) {
    out.key(name)
    out.beginObject()
    out.field("seq", anchor.seq)
    out.field("hash", anchor.hash.hex)
    out.endObject()
  }

  static func writeEntry(seq: UInt64, view: EntryFormat.View, into out: inout JSONWriter) throws(FormatError) {
    guard let typeName = String(validating: view.typeName, as: UTF8.self) else {
      throw FormatError("invalid UTF-8 in the type name")
    }
    out.beginObject()
    out.field("record", "entry")
    out.field("seq", seq)
    out.field("timestamp", Int(view.timestamp))
    out.field("time", ISOTime.string(micros: view.timestamp))
    out.field("kind", view.kind.description)
    out.field("flags", Int(view.flags.rawValue))
    out.field("codec", view.codec.description)
    out.field("schemaVersion", Int(view.schemaVersion))
    out.field("typeName", typeName)
    out.key("metadata")
    out.beginObject()
    var reader = ByteReader(view.metadata)
    for _ in 0..<view.metadataCount {
      let key = try reader.string(Int(try reader.integer(UInt16.self, "metadata key length")), "metadata key")
      let value = try reader.string(Int(try reader.integer(UInt32.self, "metadata value length")), "metadata value")
      out.field(key, value)
    }
    out.endObject()
    let payload = Array(view.payload)
    out.field("payloadBase64", Data(payload).base64EncodedString())
    out.key("payload")
    if let json = try? PayloadText.compactJSON(payload, codec: view.codec) { out.raw(json) } else { out.null() }
    out.field("hash", Array(view.hash).hex)
    out.endObject()
    out.newline()
  }

  static func writeSnapshot(_ snapshot: Snapshot, value: [UInt8], into out: inout JSONWriter) {
    out.beginObject()
    out.field("record", "snapshot")
    out.field("seq", snapshot.seq)
    out.field("timestamp", Int(snapshot.timestamp))
    out.field("time", ISOTime.string(micros: snapshot.timestamp))
    out.field("codec", snapshot.codec.description)
    out.field("schemaVersion", Int(snapshot.schemaVersion))
    out.field("chainHash", snapshot.chainHash.hex)
    out.field("size", value.count)
    out.field("valueBase64", Data(value).base64EncodedString())
    out.endObject()
    out.newline()
  }

  static func putMeta(_ meta: LogMeta, txn: Transaction, db: Database) throws {
    var writer = ByteWriter()
    writer.append(bigEndian: meta.formatVersion)
    try txn.put(writer.bytes, forKey: Array(MetaKey.format.utf8), in: db)
    try txn.put(Array(meta.appID.utf8), forKey: Array(MetaKey.app.utf8), in: db)
    writer = ByteWriter()
    writer.append(bigEndian: meta.schemaVersion)
    try txn.put(writer.bytes, forKey: Array(MetaKey.schema.utf8), in: db)
    writer = ByteWriter()
    writer.append(bigEndian: meta.created)
    try txn.put(writer.bytes, forKey: Array(MetaKey.created.utf8), in: db)
    try txn.put(anchorBytes(meta.anchor), forKey: Array(MetaKey.anchor.utf8), in: db)
  }

  /// One line of an export, as decoded: the union of the header's, an entry's and a snapshot's fields.
  struct Line: Decodable {
    struct Anchor: Decodable {
      var seq: UInt64
      var hash: String
    }
    var chronicleExport: Int?
    var record: String?
    var formatVersion: UInt32?
    var appID: String?
    var schemaVersion: UInt32?
    var created: Int64?
    var anchor: Anchor?
    var entries: Int?
    var snapshots: [UInt64]?
    var head: Anchor?
    var seq: UInt64?
    var timestamp: Int64?
    var kind: String?
    var flags: UInt8?
    var codec: String?
    var typeName: String?
    var metadata: [String: String]?
    var payloadBase64: String?
    var hash: String?
    var valueBase64: String?
  }
}

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

// MARK: - Files

/// A file written with plain `write(2)` calls, synced before it is closed.
struct DurableFile {
  let path: String
  private var descriptor: Int32

  /// Creates `path` (mode 0600) exclusively and without following a symbolic link
  /// (`O_CREAT | O_EXCL | O_NOFOLLOW`), and holds an exclusive `flock` on it while it is open.
  ///
  /// When `path` exists it is replaced only if it is stale: a regular file of this user with
  /// no other hard link, that no process holds locked, and whose contents are empty or
  /// satisfy `staleIf` (so only a file this code wrote, left by a killed process). Anything
  /// else there (a symbolic link, a directory, another user's file, a file being written,
  /// other contents) is refused with ``LogError/destinationExists(path:reason:)``.
  init(creatingExclusively path: String, staleIf isOurs: ([UInt8]) -> Bool) throws(LogError) {
    self.path = path
    descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if descriptor < 0, errno == EEXIST {
      try Self.removeStale(path, isOurs: isOurs)
      descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }
    guard descriptor >= 0 else {
      let code = errno
      if code == EEXIST {
        throw .destinationExists(path: path, reason: "appeared meanwhile: another process writes it")
      }
      throw .io(path: path, operation: "create", reason: String(cString: strerror(code)))
    }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      _ = posixClose(descriptor)
      descriptor = -1
      throw .destinationExists(path: path, reason: "is being written by another process")
    }
  }

  /// Removes `path` if it is a stale temporary file (see ``init(creatingExclusively:staleIf:)``), else throws.
  private static func removeStale(_ path: String, isOurs: ([UInt8]) -> Bool) throws(LogError) {
    func refuse(_ reason: String) -> LogError {
      .destinationExists(path: path, reason: reason + ": it is not replaced; remove it if it is not needed")
    }
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
      let code = errno
      if code == ELOOP { throw refuse("exists and is a symbolic link") }
      throw refuse("exists and cannot be opened (\(String(cString: strerror(code))))")
    }
    defer { _ = posixClose(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
      throw refuse("exists and is not a regular file")
    }
    guard status.st_uid == geteuid() else { throw refuse("exists and belongs to another user") }
    guard status.st_nlink == 1 else { throw refuse("exists and has other hard links") }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      throw .destinationExists(path: path, reason: "is being written by another process")
    }
    var start = [UInt8](repeating: 0, count: 64)
    let count = start.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
    guard count >= 0, count == 0 || isOurs(Array(start.prefix(count))) else {
      throw refuse("exists and is not an unfinished export")
    }
    // Unlinking removes the name only: whatever it points to is never touched.
    guard unlink(path) == 0 || errno == ENOENT else {
      throw .io(path: path, operation: "remove the stale", reason: String(cString: strerror(errno)))
    }
  }

  /// Whether `start` is how an export file starts (its header line).
  static func isExportStart(_ start: [UInt8]) -> Bool {
    let marker = Array(#"{"chronicleExport":"#.utf8)
    return start.count >= marker.count ? start.starts(with: marker) : marker.starts(with: start)
  }

  mutating func write(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = posixWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          throw LogError.io(path: path, operation: "write to", reason: String(cString: strerror(errno)))
        }
        offset += written
      }
    }
  }

  mutating func syncAndClose() throws(LogError) {
    defer { close() }
    guard fsync(descriptor) == 0 else {
      throw LogError.io(path: path, operation: "sync", reason: String(cString: strerror(errno)))
    }
  }

  mutating func close() {
    if descriptor >= 0 { _ = posixClose(descriptor) }
    descriptor = -1
  }

  /// Renames `source` to `destination` and syncs the directory, so the new name survives a power loss.
  static func rename(_ source: String, to destination: String) throws(LogError) {
    guard posixRename(source, destination) == 0 else {
      throw LogError.io(
        path: destination, operation: "rename \(source) to", reason: String(cString: strerror(errno)))
    }
    syncDirectory((destination as NSString).deletingLastPathComponent)
  }

  /// Gives `source` the name `destination` without ever replacing a file there (`link(2)`,
  /// then unlinking `source`; `rename(2)` after a check where the file system has no hard links).
  static func publish(_ source: String, as destination: String) throws(LogError) {
    if link(source, destination) == 0 {
      unlink(source)
      syncDirectory((destination as NSString).deletingLastPathComponent)
      return
    }
    let code = errno
    guard code != EEXIST else {
      throw .destinationExists(path: destination, reason: "already exists: an export never replaces a file")
    }
    var status = stat()
    guard lstat(destination, &status) != 0 else {
      throw .destinationExists(path: destination, reason: "already exists: an export never replaces a file")
    }
    try rename(source, to: destination)
  }

  /// Syncs a directory's entries (best effort: some file systems refuse it).
  static func syncDirectory(_ path: String) {
    let fd = open(path.isEmpty ? "." : path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = fsync(fd)
    _ = posixClose(fd)
  }

  /// Syncs an existing file's contents.
  static func sync(_ path: String) throws(LogError) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      throw LogError.io(path: path, operation: "open", reason: String(cString: strerror(errno)))
    }
    defer { _ = posixClose(fd) }
    guard fsync(fd) == 0 else {
      throw LogError.io(path: path, operation: "sync", reason: String(cString: strerror(errno)))
    }
  }
}

/// The C functions whose names the file types above shadow.
@inline(__always) private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
  write(fd, buffer, count)
}
@inline(__always) private func posixClose(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func posixRename(_ source: String, _ destination: String) -> Int32 {
  rename(source, destination)
}

/// Reads a file line by line (split at `\n`) in large chunks.
struct LineReader {
  let path: String
  private let handle: FileHandle
  private var buffer: [UInt8] = []
  private var start = 0
  private var atEnd = false
  private(set) var bytesRead = 0

  init(path: String) throws {
    self.path = path
    guard FileManager.default.fileExists(atPath: path) else {
      throw LogError.io(path: path, operation: "read", reason: "no such file")
    }
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw LogError.io(path: path, operation: "read", reason: "permission denied")
    }
    self.handle = handle
  }

  /// The next line without its newline, or `nil` at the end.
  mutating func next() throws -> ArraySlice<UInt8>? {
    while true {
      if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
        defer { start = newline + 1 }
        return buffer[start..<newline]
      }
      if atEnd {
        guard start < buffer.count else { return nil }
        defer { start = buffer.count }
        return buffer[start...]
      }
      buffer.removeSubrange(..<start)
      start = 0
      let chunk: Data?
      do { chunk = try handle.read(upToCount: 1 << 20) } catch {
        throw LogError.io(path: path, operation: "read", reason: error.localizedDescription)
      }
      if let chunk, !chunk.isEmpty {
        buffer.append(contentsOf: chunk)
        bytesRead += chunk.count
      } else {
        atEnd = true
      }
    }
  }
}

// MARK: - Text helpers shared with LogToolKit

/// Compact JSON text built by appending to a byte buffer, keys in the order written.
///
/// ```swift
/// var out = JSONWriter()
/// out.beginObject()
/// out.field("seq", UInt64(1))
/// out.key("payload")
/// out.raw(#"{"increment":{}}"#)
/// out.endObject()   // {"seq":1,"payload":{"increment":{}}}
/// ```
package struct JSONWriter {
  /// The text so far, UTF-8.
  package var bytes: [UInt8] = []
  private var needsComma = false

  /// An empty writer.
  package init() {}

  /// The text so far as a string.
  package var text: String { String(decoding: bytes, as: UTF8.self) }

  /// Starts an object.
  package mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
  }

  /// Ends an object.
  package mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  /// Starts an array.
  package mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma = false
  }

  /// Ends an array.
  package mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// Writes an object key; the next call writes its value.
  package mutating func key(_ name: String) {
    separate()
    appendQuoted(name)
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
  }

  /// Writes `"name":"value"`.
  package mutating func field(_ name: String, _ value: String) {
    key(name)
    string(value)
  }

  /// Writes `"name":value`.
  package mutating func field(_ name: String, _ value: Int) {
    key(name)
    int(value)
  }

  /// Writes `"name":value`.
  package mutating func field(_ name: String, _ value: UInt64) {
    key(name)
    uint(value)
  }

  /// Writes `"name":true` or `false`.
  package mutating func field(_ name: String, _ value: Bool) {
    key(name)
    bool(value)
  }

  /// Writes a string value.
  package mutating func string(_ value: String) {
    separate()
    appendQuoted(value)
    needsComma = true
  }

  /// Writes an integer value.
  package mutating func int(_ value: Int) { rawValue(String(value)) }
  /// Writes an unsigned integer value.
  package mutating func uint(_ value: UInt64) { rawValue(String(value)) }
  /// Writes a number with a fractional part (`null` if it is not finite).
  package mutating func double(_ value: Double) { rawValue(value.isFinite ? "\(value)" : "null") }
  /// Writes `true` or `false`.
  package mutating func bool(_ value: Bool) { rawValue(value ? "true" : "false") }
  /// Writes `null`.
  package mutating func null() { rawValue("null") }
  /// Writes already valid JSON text as a value.
  package mutating func raw(_ json: String) { rawValue(json) }

  /// Ends a line (for JSON Lines).
  package mutating func newline() {
    bytes.append(UInt8(ascii: "\n"))
    needsComma = false
  }

  private mutating func rawValue(_ text: String) {
    separate()
    bytes.append(contentsOf: text.utf8)
    needsComma = true
  }

  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }

  private mutating func appendQuoted(_ text: String) {
    JSONString.append(text, to: &bytes, shortEscapes: true)
  }
}

/// A payload as one line of JSON text, for people and tools.
package enum PayloadText {
  /// The payload as compact JSON: a JSON payload that is already valid, single-line JSON
  /// is returned as stored (fast, and exactly what the app wrote); anything else goes
  /// through ``PayloadCodec/renderJSON(_:prettyPrinted:)``.
  package static func compactJSON(_ bytes: [UInt8], codec: PayloadCodec) throws -> String {
    if codec == .json, !bytes.contains(0x0A), !bytes.contains(0x0D), JSONCheck.isValid(bytes),
      let text = String(validating: bytes, as: UTF8.self)
    {
      return text
    }
    return try codec.renderJSON(bytes)
  }
}

/// A strict RFC 8259 syntax check of a JSON text (one value, optional surrounding whitespace).
enum JSONCheck {
  /// Whether `bytes` is exactly one JSON value; nesting deeper than 512 counts as invalid.
  static func isValid(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { buffer in
      var index = 0
      skipWhitespace(buffer, &index)
      guard value(buffer, &index, depth: 0) else { return false }
      skipWhitespace(buffer, &index)
      return index == buffer.count
    }
  }

  private static func skipWhitespace(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
    while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
  }

  private static func value(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int) -> Bool {
    guard i < b.count, depth < 512 else { return false }
    switch b[i] {
    case UInt8(ascii: "{"):
      i += 1
      skipWhitespace(b, &i)
      if i < b.count, b[i] == UInt8(ascii: "}") {
        i += 1
        return true
      }
      while true {
        guard i < b.count, b[i] == UInt8(ascii: "\""), string(b, &i) else { return false }
        skipWhitespace(b, &i)
        guard i < b.count, b[i] == UInt8(ascii: ":") else { return false }
        i += 1
        skipWhitespace(b, &i)
        guard value(b, &i, depth: depth + 1) else { return false }
        skipWhitespace(b, &i)
        guard i < b.count else { return false }
        if b[i] == UInt8(ascii: "}") {
          i += 1
          return true
        }
        guard b[i] == UInt8(ascii: ",") else { return false }
        i += 1
        skipWhitespace(b, &i)
      }
    case UInt8(ascii: "["):
      i += 1
      skipWhitespace(b, &i)
      if i < b.count, b[i] == UInt8(ascii: "]") {
        i += 1
        return true
      }
      while true {
        guard value(b, &i, depth: depth + 1) else { return false }
        skipWhitespace(b, &i)
        guard i < b.count else { return false }
        if b[i] == UInt8(ascii: "]") {
          i += 1
          return true
        }
        guard b[i] == UInt8(ascii: ",") else { return false }
        i += 1
        skipWhitespace(b, &i)
      }
    case UInt8(ascii: "\""): return string(b, &i)
    case UInt8(ascii: "t"): return literal(b, &i, "true")
    case UInt8(ascii: "f"): return literal(b, &i, "false")
    case UInt8(ascii: "n"): return literal(b, &i, "null")
    default: return number(b, &i)
    }
  }

  private static func literal(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ word: StaticString) -> Bool {
    let count = word.utf8CodeUnitCount
    guard i + count <= b.count else { return false }
    for offset in 0..<count where b[i + offset] != word.utf8Start[offset] { return false }
    i += count
    return true
  }

  private static func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
    i += 1
    while i < b.count {
      let byte = b[i]
      i += 1
      switch byte {
      case UInt8(ascii: "\""): return true
      case 0..<0x20: return false
      case UInt8(ascii: "\\"):
        guard i < b.count else { return false }
        let escaped = b[i]
        i += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
          UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
          continue
        case UInt8(ascii: "u"):
          guard i + 4 <= b.count else { return false }
          for offset in 0..<4 where !isHexDigit(b[i + offset]) { return false }
          i += 4
        default: return false
        }
      default: continue
      }
    }
    return false
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
  }

  private static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
    func digits() -> Int {
      let start = i
      while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
      return i - start
    }
    if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
    guard i < b.count else { return false }
    if b[i] == UInt8(ascii: "0") {
      i += 1
    } else {
      guard digits() > 0 else { return false }
    }
    if i < b.count, b[i] == UInt8(ascii: ".") {
      i += 1
      guard digits() > 0 else { return false }
    }
    if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
      i += 1
      if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
      guard digits() > 0 else { return false }
    }
    return true
  }
}

/// ISO 8601 text of the log's microsecond timestamps, in UTC, computed without calendars
/// (so it is fast, and the same on every platform).
package enum ISOTime {
  /// `2026-01-01T00:00:00.000000Z` (`fractionDigits` 6, 3 or 0).
  package static func string(micros: Int64, fractionDigits: Int = 6) -> String {
    let (seconds, fraction) = floorDivide(micros, 1_000_000)
    let (days, secondOfDay) = floorDivide(seconds, 86_400)
    let (year, month, day) = CivilDate.from(days: days)
    var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
    text += "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
    switch fractionDigits {
    case 6: text += "." + pad(fraction, 6)
    case 3: text += "." + pad(fraction / 1000, 3)
    default: break
    }
    return text + "Z"
  }

  /// `2026-01-01`: the UTC day of a timestamp.
  package static func day(micros: Int64) -> String {
    let (days, _) = floorDivide(floorDivide(micros, 1_000_000).0, 86_400)
    let (year, month, day) = CivilDate.from(days: days)
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
  }

  /// Parses `YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fraction]]` and `Z` or `±HH:MM`
  /// (UTC when no zone is given), into microseconds since 1970.
  package static func parse(_ text: String) -> Int64? {
    var scanner = Array(text.utf8)[...]
    func number(_ digits: Int) -> Int64? {
      guard scanner.count >= digits else { return nil }
      var value: Int64 = 0
      for _ in 0..<digits {
        let byte = scanner.removeFirst()
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int64(byte - 0x30)
      }
      return value
    }
    func take(_ character: Character) -> Bool {
      guard let first = scanner.first, first == character.asciiValue else { return false }
      scanner.removeFirst()
      return true
    }
    guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    var micros = days(fromCivil: year, month, day) * 86_400_000_000
    if take("T") || take("t") || take(" ") {
      guard let hour = number(2), take(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
      micros += (hour * 3600 + minute * 60) * 1_000_000
      if take(":") {
        guard let second = number(2), second < 61 else { return nil }
        micros += second * 1_000_000
        if take(".") || take(",") {
          var scale: Int64 = 100_000
          var digits = 0
          while let byte = scanner.first, (0x30...0x39).contains(byte) {
            scanner.removeFirst()
            micros += Int64(byte - 0x30) * scale
            scale /= 10
            digits += 1
          }
          guard digits > 0 else { return nil }
        }
      }
      if take("Z") || take("z") {
      } else if let sign = scanner.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
        scanner.removeFirst()
        guard let hours = number(2) else { return nil }
        _ = take(":")
        guard let minutes = number(2) else { return nil }
        let offset = (hours * 3600 + minutes * 60) * 1_000_000
        micros += sign == UInt8(ascii: "+") ? -offset : offset
      }
    }
    return scanner.isEmpty ? micros : nil
  }

  /// The quotient rounded towards minus infinity and the remainder (`0..<divisor`), for a positive
  /// `divisor`; defined for every `value`, `Int64.min` included.
  static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
    return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }


  /// Days since 1970-01-01 of a proleptic Gregorian date.
  private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}

extension Array where Element == UInt8 {
  /// Parses lower- or upper-case hexadecimal text; `nil` if it is not.
  init?(hex text: String) {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    func value(_ digit: UInt8) -> UInt8? {
      switch digit {
      case 0x30...0x39: digit - 0x30
      case 0x61...0x66: digit - 0x61 + 10
      case 0x41...0x46: digit - 0x41 + 10
      default: nil
      }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    self = bytes
  }
}
