import Foundation
import ChronicleLMDB

// MARK: - Salvage

extension ActionLog {
  /// Copies every entry of the log in `source` that can still be read and whose chain
  /// hash checks from the anchor into a new log in `destination`, with every intact
  /// snapshot of those entries, and reports exactly what was lost.
  ///
  /// The copy keeps the damaged log's meta data (app, schema version, creation time,
  /// anchor, log identifier): the new log is the intact prefix of the old one, entry for entry and
  /// hash for hash. It gets its Merkle tree (with the damaged log's tree hashes left of the
  /// anchor) and keeps each stored checkpoint whose root its entries still produce; a checkpoint
  /// they do not produce (one larger than what survived, say) is reported in
  /// ``SalvageReport/checkpointsDropped``, never kept. It stops at the first entry that cannot be read, is missing or
  /// fails its hash: nothing after it can be tied to the chain. The damaged log is
  /// opened read-only and never changed.
  ///
  /// `destination` must not exist or be an empty directory, unless it holds the
  /// partial result of an earlier salvage of this log, which is then resumed.
  ///
  /// A damaged page can make LMDB crash the process that reads it; `logtool salvage`
  /// therefore runs this in a child process and resumes after such a crash.
  ///
  /// - Throws: ``LogError``: the cases of opening `source` read-only, and
  ///   ``LogError/destinationExists(path:reason:)`` if `destination` is unusable.
  @discardableResult
  public static func salvage(from source: URL, into destination: URL) throws -> SalvageReport {
    try salvage(from: source, into: destination, options: SalvageOptions(), events: nil)
  }

  /// ``salvage(from:into:)`` with the options and events a supervising parent process uses.
  package static func salvage(
    from source: URL, into destination: URL, options: SalvageOptions, events: ((SalvageEvent) -> Void)?
  ) throws -> SalvageReport {
    // LMDB refuses a file with one damaged meta page: read a copy through the intact one.
    let repaired = try MetaPageRepair(source: source.standardizedFileURL.path)
    defer { repaired?.remove() }
    let damaged = try ActionLog(directory: repaired.map { URL(fileURLWithPath: $0.directory) } ?? source, access: .readOnly)
    defer { try? damaged.close() }
    let meta = try damaged.meta()
    let destinationPath = destination.standardizedFileURL.path
    let resuming = FileManager.default.fileExists(atPath: destinationPath + "/" + LogDirectory.dataFile)
    if resuming {
      if let identity = LogDirectory.Identity(path: destinationPath), identity == damaged.identity {
        throw LogError.destinationExists(path: destinationPath, reason: "is the damaged log itself")
      }
    } else {
      try checkSalvageDestination(destinationPath)
    }
    // Salvage copies stored bytes and checks hashes: an encrypted log's records are copied as they
    // are (same log id, which they are bound to), and no key is needed.
    var outOptions = Options(
      durability: .normal, flushInterval: nil, appID: meta.appID, schemaVersion: meta.schemaVersion)
    outOptions.copiesStoredRecords = true
    let out = try ActionLog(directory: destination, access: .readWrite, options: outOptions)
    defer { try? out.close() }
    if resuming {
      let found = try out.meta()
      guard found.anchor == meta.anchor, found.appID == meta.appID, found.created == meta.created else {
        throw LogError.destinationExists(
          path: destinationPath, reason: "holds another log, not an earlier salvage of \(repaired?.source ?? damaged.path)")
      }
    } else {
      // The identity and the tree hashes left of the anchor, as far as they read: the salvaged log keeps
      // the damaged one's origin, and its tree (built below) the hashes that commit to compacted entries.
      let identity = try? damaged.logID()
      let left = (try? storage { try damaged.environment.read { try TreeStorage.storedLeft(of: meta.anchor.seq, $0) } }) ?? []
      try storage {
        try out.environment.write { txn in
          try MetaRecord.write(meta, in: txn, db: out.metaDB)
          if let identity, identity.count == 16 {
            try txn.put(identity, forKey: Array(TreeStorage.logIDKey.utf8), in: out.metaDB)
          }
          let tree = try txn.openDatabase(named: TreeStorage.treeName, create: true)
          for (node, hash) in left where hash.count == MerkleHash.size {
            try txn.put(hash, forKey: TreeStorage.key(level: node.level, index: node.index), in: tree)
          }
        }
      }
    }
    var head = try Self.readHead(out.environment, out.entriesDB, meta: meta, path: out.path)
    var report = SalvageReport(
      source: repaired?.source ?? damaged.path, destination: out.path, anchor: meta.anchor, head: head)
    report.metaPageRepair = repaired?.note

    if options.readsSourceHead {
      report.sourceLastSeq = try? storage {
        try damaged.environment.read { txn in
          try txn.withCursor(on: damaged.entriesDB) { cursor in try cursor.last().map { try sequence(fromKey: $0.key) } }
        }
      }
      events?(.sourceHead(report.sourceLastSeq))
    }
    if options.copiesEntries {
      report.stopReason = try damaged.copyIntactEntries(into: out, after: &head, batchSize: options.batchSize, events)
      if report.stopReason == nil, let last = report.sourceLastSeq, head.seq < last {
        report.stopReason = "the scan ended at entry \(head.seq), before the damaged log's last entry \(last)"
      }
      events?(.entriesDone(report.stopReason?.replacingOccurrences(of: "\n", with: " ")))
    } else if let last = report.sourceLastSeq, head.seq < last {
      report.stopReason = "entry \((head.seq == .max ? .max : head.seq + 1)) cannot be read"
    }
    report.head = head
    report.entriesCopied = Int(head.seq - meta.anchor.seq)
    try damaged.copyIntactSnapshots(into: out, through: head, anchor: meta.anchor, options: options, &report, events)
    try damaged.keepProducedCheckpoints(into: out, anchor: meta.anchor, head: head, &report)
    try out.sync()
    return report
  }

  /// Builds the new log's tree over the salvaged entries and copies each of the damaged log's
  /// checkpoints that they still produce: same origin, a size up to the salvaged head, and the
  /// root of the salvaged tree of that size. Every other checkpoint is reported, never kept.
  private func keepProducedCheckpoints(
    into out: ActionLog, anchor: ChainAnchor, head: ChainAnchor, _ report: inout SalvageReport
  ) throws {
    _ = try Self.openTree(out.environment, entries: out.entriesDB, meta: out.metaDB, anchor: anchor, head: head)
    let notes: [(UInt64, [UInt8])]
    do {
      notes = try storage {
        try environment.read { txn in
          guard let db = try? txn.openDatabase(named: TreeStorage.checkpointsName) else { return [] }
          return try txn.withCursor(on: db) { cursor in
            var found: [(UInt64, [UInt8])] = []
            var item = try cursor.first()
            while let (key, value) = item {
              found.append(((try? sequence(fromKey: key)) ?? 0, Array(value)))
              item = try cursor.next()
            }
            return found
          }
        }
      }
    } catch {
      report.checkpointsDropped.append(.init(size: 0, reason: "the damaged log's checkpoints cannot be read: \(error)"))
      return
    }
    guard !notes.isEmpty else { return }
    let origin = try? out.origin()
    let treeSize = try? out.treeSize
    var kept: [(UInt64, [UInt8])] = []
    for (key, bytes) in notes {
      let checkpoint: Checkpoint
      do { checkpoint = try Checkpoint(parsing: try SignedNote(parsing: bytes).text) } catch {
        report.checkpointsDropped.append(.init(size: key, reason: "it is not a readable signed checkpoint: \(error)"))
        continue
      }
      let size = checkpoint.size
      guard size == key else {
        report.checkpointsDropped.append(.init(size: key, reason: "it is stored under size \(key) but covers \(size) entries"))
        continue
      }
      guard checkpoint.origin == origin else {
        report.checkpointsDropped.append(
          .init(size: size, reason: "it is of '\(checkpoint.origin)', not of the salvaged log ('\(origin ?? "no origin")')"))
        continue
      }
      guard size <= head.seq else {
        report.checkpointsDropped.append(
          .init(size: size, reason: "it covers \(size) entries, more than the \(head.seq) that survived"))
        continue
      }
      guard let treeSize, size <= treeSize, let root = try? out.treeRoot(size: size) else {
        report.checkpointsDropped.append(
          .init(size: size, reason: "the salvaged log holds no tree hashes that commit to its entries"))
        continue
      }
      guard root == checkpoint.rootHash else {
        report.checkpointsDropped.append(.init(size: size, reason: "the salvaged entries do not produce its root"))
        continue
      }
      kept.append((size, bytes))
    }
    if !kept.isEmpty {
      try storage {
        try out.environment.write { txn in
          let db = try txn.openDatabase(named: TreeStorage.checkpointsName, create: true)
          for (size, bytes) in kept {
            try withSequenceKey(size) { key in try bytes.withUnsafeBytes { try txn.put($0, forKey: key, in: db) } }
          }
        }
      }
    }
    report.checkpointsKept = kept.map(\.0)
  }

  /// Copies entries after `head` while each reads, follows in sequence and checks its hash;
  /// commits every `batchSize` entries. Returns why it stopped early, `nil` at the end of the data.
  private func copyIntactEntries(
    into out: ActionLog, after head: inout ChainAnchor, batchSize: Int, _ events: ((SalvageEvent) -> Void)?
  ) throws -> String? {
    var batch: [(UInt64, [UInt8])] = []
    var committed = head
    func commit() throws {
      guard !batch.isEmpty else { return }
      try storage {
        try out.environment.write { txn in
          for (seq, value) in batch {
            try withSequenceKey(seq) { key in
              try value.withUnsafeBytes { try txn.put($0, forKey: key, in: out.entriesDB, flags: .append) }
            }
          }
        }
      }
      batch.removeAll(keepingCapacity: true)
      committed = head
      events?(.committed(head.seq))
    }
    var stopReason: String?
    let encrypted = isEncrypted
    do {
      try environment.read { txn in
        try txn.withCursor(on: entriesDB) { cursor in
          var item: Cursor.Item?
          do {
            item = try withSequenceKey((head.seq == .max ? .max : head.seq + 1)) { try cursor.seek(atLeast: $0) }
          } catch {
            stopReason = "entry \((head.seq == .max ? .max : head.seq + 1)) cannot be read: \(error)"
            return
          }
          var computed = [UInt8](repeating: 0, count: 32)
          while let (key, value) = item {
            let expected = (head.seq == .max ? .max : head.seq + 1)
            guard key.count == 8 else {
              stopReason = "entry \(expected) cannot be read: a key of \(key.count) bytes where an 8-byte seq belongs"
              return
            }
            guard let seq = try? sequence(fromKey: key), seq == expected else {
              stopReason = "entry \(expected) is missing"
              return
            }
            guard let view = try? EntryFormat.parse(value, seq: seq) else {
              stopReason = "entry \(seq) has an unreadable header"
              return
            }
            guard (view.sealed != nil) == encrypted else {
              stopReason = "entry \(seq) is \(encrypted ? "in the clear in an encrypted log" : "encrypted in a log in the clear")"
              return
            }
            head.hash.withUnsafeBytes { prev in
              computed.withUnsafeMutableBytes { Chain.hash(previous: prev, seq: seq, body: view.body, into: $0) }
            }
            guard computed.elementsEqual(view.hash) else {
              stopReason = "entry \(seq) fails its hash check"
              return
            }
            batch.append((seq, Array(value)))
            head = ChainAnchor(seq: seq, hash: computed)
            if batch.count >= batchSize { try commit() }
            do { item = try cursor.next() } catch {
              stopReason = "entry \((head.seq == .max ? .max : head.seq + 1)) cannot be read: \(error)"
              return
            }
          }
        }
      }
    } catch let error as LMDBError {
      stopReason = "entry \((head.seq == .max ? .max : head.seq + 1)) cannot be read: \(error)"
    }
    try commit()
    head = committed
    return stopReason
  }

  /// Copies each snapshot at or before `head` whose checksum and chain hash check.
  private func copyIntactSnapshots(
    into out: ActionLog, through head: ChainAnchor, anchor: ChainAnchor, options: SalvageOptions,
    _ report: inout SalvageReport, _ events: ((SalvageEvent) -> Void)?
  ) throws {
    var seqs: [UInt64] = []
    do {
      try storage {
        try environment.read { txn in
          try txn.withCursor(on: snapshotsDB) { cursor in
            var item = try cursor.first()
            while let (key, _) = item {
              seqs.append(try decodeKey(key))
              item = try cursor.next()
            }
          }
        }
      }
    } catch {
      report.snapshotsLost.append(
        .init(seq: seqs.last.map { $0 &+ 1 } ?? 0, reason: "the list of snapshots cannot be read from here on: \(error)"))
    }
    let present = Set(try out.snapshots().map(\.seq))
    for seq in Set(seqs).union(options.skippedSnapshots.keys).sorted() {
      if let reason = options.skippedSnapshots[seq] {
        report.snapshotsLost.append(.init(seq: seq, reason: reason))
        continue
      }
      guard seq <= head.seq, seq >= anchor.seq else {
        report.snapshotsLost.append(.init(seq: seq, reason: "entry \(seq), which it follows, was lost"))
        continue
      }
      if present.contains(seq) {
        report.snapshotsCopied.append(seq)
        continue
      }
      events?(.readingSnapshot(seq))
      let value: [UInt8]?
      do {
        value = try storage {
          try environment.read { txn in
            try withSequenceKey(seq) { key in try txn.withValue(forKey: key, in: snapshotsDB) { Array($0) } }
          }
        }
      } catch {
        report.snapshotsLost.append(.init(seq: seq, reason: "cannot be read: \(error)"))
        continue
      }
      // An encrypted snapshot is copied as stored: its checksum and chain hash check without the key.
      let layout = isEncrypted ? SnapshotFormat.sealedLayoutVersion : SnapshotFormat.layoutVersion
      guard let value, value.first == layout,
        let snapshot = value.withUnsafeBytes({ try? SnapshotFormat.decode(seq: seq, value: $0, sealedAsEmpty: true) })
      else {
        report.snapshotsLost.append(.init(seq: seq, reason: "its checksum or layout is wrong"))
        continue
      }
      let expected: [UInt8]? = seq == anchor.seq ? anchor.hash : try out.storedHash(at: seq)
      guard snapshot.chainHash == expected else {
        report.snapshotsLost.append(.init(seq: seq, reason: "its chain hash differs from entry \(seq)'s hash"))
        continue
      }
      try storage {
        try out.environment.write { txn in
          try withSequenceKey(seq) { key in try value.withUnsafeBytes { try txn.put($0, forKey: key, in: out.snapshotsDB) } }
        }
      }
      report.snapshotsCopied.append(seq)
    }
  }

  private static func checkSalvageDestination(_ path: String) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
    guard isDirectory.boolValue else {
      throw LogError.destinationExists(path: path, reason: "is a file: a salvage builds a new log directory")
    }
    let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    guard contents.isEmpty else {
      throw LogError.destinationExists(
        path: path,
        reason: "is not empty (holds \(contents.sorted().prefix(3).joined(separator: ", "))): a salvage builds a new log")
    }
  }
}

// MARK: - A damaged meta page

/// A copy of a log's data file whose damaged meta page is replaced by the intact one, in a
/// temporary directory: LMDB refuses a file with a damaged meta page, but the other one names the
/// log as of an earlier commit (the pages of the commit before the last are never reused by it).
struct MetaPageRepair {
  /// The damaged log's directory.
  let source: String
  /// The temporary directory that holds the copy.
  let directory: String
  /// What was done, for the report.
  let note: String

  /// The copy of `source`'s data file, or `nil` when both meta pages are intact (or neither is:
  /// then opening the log says what is wrong).
  init?(source: String) throws {
    let dataPath = source + "/" + LogDirectory.dataFile
    guard let head = DataFile.head(atPath: dataPath), let slots = DataFile.metaPageSlots(inHead: head),
      let damaged = slots.pages.firstIndex(where: { $0 == nil }), let intact = slots.pages[1 - damaged]
    else { return nil }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("chronicle-salvage-\(UUID().uuidString)").path
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
      try FileManager.default.copyItem(atPath: dataPath, toPath: directory + "/" + LogDirectory.dataFile)
      let handle = try FileHandle(forUpdating: URL(fileURLWithPath: directory + "/" + LogDirectory.dataFile))
      defer { try? handle.close() }
      var page = Array(head[((1 - damaged) * slots.pageSize)..<((2 - damaged) * slots.pageSize)])
      // The page header's first field is the page's number.
      withUnsafeBytes(of: UInt64(damaged).littleEndian) { page.replaceSubrange(0..<8, with: $0) }
      try handle.seek(toOffset: UInt64(damaged * slots.pageSize))
      try handle.write(contentsOf: page)
    } catch {
      try? FileManager.default.removeItem(atPath: directory)
      throw LogError.io(path: directory, operation: "copy the damaged data file into", reason: "\(error)")
    }
    self.source = source
    self.directory = directory
    note =
      "meta page \(damaged) of \(dataPath) is damaged: read through meta page \(1 - damaged), the log as of "
      + "transaction \(intact.transactionID)"
  }

  func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
