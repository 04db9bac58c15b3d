import Foundation
import ChronicleLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

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
  /// hashes, meta (app, schema, created, anchor, log identifier), snapshots, the Merkle tree and
  /// the stored checkpoints come out byte-identical to the log that was exported (its prefix up to
  /// the last exported entry, for a partial export). Every checkpoint's root is checked against
  /// the tree of the imported entries before anything is kept.
  ///
  /// A version-1 export carries neither the log identifier nor tree hashes nor checkpoints: the
  /// new log has no identifier until a writer first opens it and creates a fresh one (so a new
  /// origin), and, when the export starts after an anchor, no tree (nothing commits to the entries
  /// before it).
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
    } catch LogError.noSpace(_, let available) {
      throw LogError.noSpace(path: destination, available: available)
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
    // The tree hashes left of the anchor and the subtrees the entries complete: the original's tree.
    var treeBatch: [(TreeStorage.Node, [UInt8])] = []
    var snapshots: [(UInt64, [UInt8], line: Int)] = []
    var checkpoints: [(UInt64, [UInt8])] = []
    func flush() throws(LogError) {
      guard !batch.isEmpty || !treeBatch.isEmpty || !metaWritten else { return }
      try storage {
        try log.environment.write { txn in
          if !metaWritten {
            try MetaRecord.write(header.meta, in: txn, db: log.metaDB)
            // Until the import completes, every tool refuses the log as unfinished.
            try txn.put([], forKey: Array(MetaKey.unfinishedImport.utf8), in: log.metaDB)
            // An export without an identifier (version 1, or of a log that had none yet) gives a log
            // without one, like the exported log: the first writer that opens it creates a fresh one.
            if let id = header.logID {
              try txn.put(id, forKey: Array(TreeStorage.logIDKey.utf8), in: log.metaDB)
            } else {
              _ = try txn.delete(forKey: Array(TreeStorage.logIDKey.utf8), in: log.metaDB)
            }
          }
          for (seq, value) in batch {
            try withSequenceKey(seq) { key in
              try value.withUnsafeBytes { try txn.put($0, forKey: key, in: log.entriesDB, flags: .append) }
            }
          }
          if !treeBatch.isEmpty {
            let tree = try txn.openDatabase(named: TreeStorage.treeName, create: true)
            for (node, hash) in treeBatch {
              try txn.put(hash, forKey: TreeStorage.key(level: node.level, index: node.index), in: tree)
            }
          }
        }
      }
      metaWritten = true
      batch.removeAll(keepingCapacity: true)
      treeBatch.removeAll(keepingCapacity: true)
    }
    try flush()
    while let item = try reader.next() {
      switch item {
      case .tree(let node, let hash):
        treeBatch.append((node, hash))
        if treeBatch.count >= 65_536 { try flush() }
      case .entry(let seq, let value, let completed):
        batch.append((seq, value))
        for subtree in completed { treeBatch.append((TreeStorage.Node(level: subtree.level, index: subtree.index), subtree.hash)) }
        if batch.count == 4096 {
          try flush()
          progress?(reader.entriesRead, header.entries)
        }
      case .snapshot(let seq, let value, let line):
        snapshots.append((seq, value, line))
      case .checkpoint(let size, let note):
        checkpoints.append((size, note))
      }
    }
    try reader.finish()
    try flush()
    progress?(reader.entriesRead, header.entries)
    if !snapshots.isEmpty || !checkpoints.isEmpty {
      try storage {
        try log.environment.write { txn in
          for (seq, value, _) in snapshots {
            try withSequenceKey(seq) { key in
              try value.withUnsafeBytes { try txn.put($0, forKey: key, in: log.snapshotsDB) }
            }
          }
          if !checkpoints.isEmpty {
            let db = try txn.openDatabase(named: TreeStorage.checkpointsName, create: true)
            for (size, note) in checkpoints {
              try withSequenceKey(size) { key in try note.withUnsafeBytes { try txn.put($0, forKey: key, in: db) } }
            }
          }
        }
      }
    }
    try storage {
      try log.environment.write { txn in
        _ = try txn.delete(forKey: Array(MetaKey.unfinishedImport.utf8), in: log.metaDB)
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
    for (name, origin) in [(compactionDirectoryName, TransferLeftover.Origin.compaction), (rekeyDirectoryName, .rekey)] {
      let work = path + "/" + name
      var status = stat()
      if lstat(work, &status) == 0 {
        found.append(TransferLeftover(path: work, origin: origin, bytes: diskUsage(work), pid: nil, creatorRunning: nil))
      }
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
