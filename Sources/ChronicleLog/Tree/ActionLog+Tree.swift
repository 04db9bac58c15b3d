import Foundation
import ChronicleLMDB

// MARK: - The tree

extension ActionLog {
  /// The number of entries the Merkle tree covers (leaf `i` is entry `i + 1`): the newest sequence
  /// number for a log whose tree is maintained. Only subtrees of 16 leaves and more are stored, so
  /// the tree reaches every entry up to the next 16-entry subtree that is not stored (a log an
  /// older writer appended to: the next writer extends it); a tree whose stored subtrees reach past
  /// the newest entry (the newest entries were removed) reports how far they reach.
  ///
  /// - Throws: ``TreeError/noTree(path:reason:)`` for a log without a tree (a format-1 log that no
  ///   writer of this version has opened yet).
  public var treeSize: UInt64 {
    get throws { try readTree { txn, db in try TreeStorage.size(txn, db, entries: entriesDB, anchor: anchor(txn)) } }
  }

  /// The root hash of the tree of the first `size` entries, combined from O(log size) stored subtrees.
  ///
  /// ```swift
  /// let root = try log.treeRoot(size: try log.treeSize)
  /// ```
  public func treeRoot(size: UInt64) throws -> [UInt8] {
    try readTree { txn, db in
      try checkSize(size, txn, db)
      return try MerkleTree.root(size: size, subtree: source(txn, db))
    }
  }

  /// The RFC 9162 inclusion proof of entry `seq` in the tree of the first `treeSize` entries.
  ///
  /// Verify it with ``MerkleTree/verifyInclusion(leafHash:index:size:proof:root:)``, index `seq − 1`,
  /// leaf hash ``MerkleHash/leaf(seq:value:)`` of the entry's stored value.
  public func inclusionProof(seq: UInt64, treeSize: UInt64) throws -> [[UInt8]] {
    guard seq >= 1, seq <= treeSize else {
      throw TreeError.outOfRange("entry \(seq) is not in the tree of the first \(treeSize) entries of \(path)")
    }
    return try readTree { txn, db in
      try checkSize(treeSize, txn, db)
      return try MerkleTree.inclusionProof(index: seq - 1, size: treeSize, subtree: source(txn, db))
    }
  }

  /// The RFC 9162 consistency proof that the tree of `oldSize` entries is a prefix of that of `newSize`.
  public func consistencyProof(from oldSize: UInt64, to newSize: UInt64) throws -> [[UInt8]] {
    try readTree { txn, db in
      try checkSize(newSize, txn, db)
      return try MerkleTree.consistencyProof(from: oldSize, to: newSize, subtree: source(txn, db))
    }
  }

  /// The hashes of the complete subtrees that make up the tree of the first `size` entries (one
  /// per set bit of `size`, the largest, leftmost one first): with the entries after `size`, they
  /// give the root of every larger tree. A server that holds a compacted log's entries from its
  /// anchor on recomputes roots from the anchor's.
  ///
  /// - Throws: ``TreeError/missingHash(path:reason:)`` when a compaction did not keep one of them.
  package func subtreeHashes(size: UInt64) throws -> [[UInt8]] {
    try readTree { txn, db in
      try checkSize(size, txn, db)
      let hash = try source(txn, db)
      return try TreeStorage.frontier(size).reversed().map { try hash($0.level, $0.index) }
    }
  }

  /// The stored bytes of entry `seq` (its body and chain hash, exactly as the `entries` database
  /// holds them): with `seq`, the data of its leaf in the tree.
  public func storedValue(seq: UInt64) throws -> [UInt8]? {
    try ensureOpen()
    return try treeStorage {
      try environment.read { txn in try withSequenceKey(seq) { try txn.withValue(forKey: $0, in: entriesDB) { Array($0) } } }
    }
  }

  /// The log's random 16-byte identifier, created with the log (or when its tree was first built).
  public func logID() throws -> [UInt8]? {
    try ensureOpen()
    return try treeStorage { try environment.read { try $0.get(forKey: Array(TreeStorage.logIDKey.utf8), in: metaDB) } }
  }

  /// The checkpoint origin that names this log: `chronicle/<app>/<log id in hex>`, the app
  /// identifier percent-encoded except for `A–Z a–z 0–9 - . _ ~`.
  public func origin() throws -> String {
    guard let id = try logID() else {
      throw TreeError.noTree(path: path, reason: "it has no log id yet: open it for writing once to build its tree")
    }
    return Self.origin(appID: try meta().appID, logID: id)
  }

  /// `chronicle/<percent-encoded app>/<hex id>`.
  static func origin(appID: String, logID: [UInt8]) -> String {
    var app = ""
    for byte in appID.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        app.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        app += "%" + [byte].hex.uppercased()
      }
    }
    return "chronicle/\(app)/\(logID.hex)"
  }

  // MARK: - Checkpoints

  /// Signs a checkpoint of the whole tree now, stores it in the log (the `checkpoints` database,
  /// under its tree size; a second signature of the same checkpoint joins the first) and returns it.
  ///
  /// The key stays with the caller: only the signed note is written.
  ///
  /// ```swift
  /// let note = try log.signCheckpoint(with: signer)
  /// try Data(note.formatted).write(to: checkpointFile)
  /// ```
  @discardableResult
  public func signCheckpoint(with signer: NoteSigner) throws -> SignedNote {
    try ensureWritable()
    let origin = try origin()
    return try state.withLock { state throws -> SignedNote in
      guard !state.isClosed else { throw LogError.closed(path: path) }
      guard let tree = state.tree, tree.frontier.size == state.last.seq else {
        throw TreeError.noTree(path: path, reason: "its tree does not follow its entries; run verify to see why")
      }
      let checkpoint = Checkpoint(origin: origin, size: tree.frontier.size, rootHash: tree.frontier.root)
      return try treeStorage {
        try environment.write { txn in
          let db = try txn.openDatabase(named: TreeStorage.checkpointsName)
          var writer = ByteWriter(capacity: 8)
          writer.append(bigEndian: checkpoint.size)
          var note = SignedNote(text: checkpoint.text)
          if let stored = try txn.get(forKey: writer.bytes, in: db), let existing = try? SignedNote(parsing: stored),
            existing.text == note.text
          {
            note = existing
            note.signatures.removeAll { $0.name == signer.name && $0.keyID == signer.keyID }
          }
          try note.sign(with: signer)
          try txn.put(note.formatted, forKey: writer.bytes, in: db)
          return note
        }
      }
    }
  }

  /// Opens the log at `directory` for writing, signs a checkpoint of its whole tree with `signer`,
  /// stores it (as ``signCheckpoint(with:)``) and closes the log. No record is sealed or opened, so
  /// an encrypted log needs no key ring: the tree commits to the stored bytes.
  ///
  /// ```swift
  /// let note = try ActionLog.signCheckpoint(directory: url, with: signer)
  /// ```
  ///
  /// - Throws: the errors of opening a log for writing (``LogError/locked(path:)`` while an app
  ///   writes it) and of ``signCheckpoint(with:)``.
  @discardableResult
  public static func signCheckpoint(directory: URL, with signer: NoteSigner) throws -> SignedNote {
    var options = Options(durability: .full, flushInterval: nil, createIfMissing: false)
    options.copiesStoredRecords = true
    let log = try ActionLog(directory: directory, access: .readWrite, options: options)
    defer { try? log.close() }
    let note = try log.signCheckpoint(with: signer)
    try log.close()
    return note
  }

  /// Every checkpoint the log signed, oldest first.
  public func checkpoints() throws -> [SignedNote] {
    try ensureOpen()
    return try treeStorage {
      try environment.read { txn in
        let db: Database
        do { db = try txn.openDatabase(named: TreeStorage.checkpointsName) } catch let error as LMDBError
          where error.code == .notFound
        { return [] }
        return try txn.withCursor(on: db) { cursor in
          var notes: [SignedNote] = []
          var item = try cursor.first()
          while let (key, value) = item {
            do { notes.append(try SignedNote(parsing: Array(value))) } catch {
              let size = (try? sequence(fromKey: key)).map(String.init) ?? "?"
              throw TreeError.malformedNote("the stored checkpoint of size \(size) in \(path): \(error)")
            }
            item = try cursor.next()
          }
          return notes
        }
      }
    }
  }

  // MARK: - Measuring the tree

  /// Whether a log opened for writing maintains the Merkle tree: `true` unless bound otherwise
  /// around the open, for that task only (`try ActionLog.maintainsTree.withValue(false) { … }`).
  /// Only the benchmark and the tests turn it off, to measure what the tree costs and to write a
  /// log as an older version did: no option of the library. A log written without the tree gets
  /// it built by the next writer that maintains it.
  @_spi(Benchmarks) public static let maintainsTree = TaskLocal<Bool>(wrappedValue: true)

  // MARK: - Helpers

  /// Runs `body` in a read transaction with the tree database.
  func readTree<R>(_ body: (Transaction, Database) throws -> R) throws -> R {
    try ensureOpen()
    return try treeStorage {
      try environment.read { txn in
        let db: Database
        do { db = try txn.openDatabase(named: TreeStorage.treeName) } catch let error as LMDBError
          where error.code == .notFound
        {
          throw TreeError.noTree(path: path, reason: "a log of an older version: open it for writing once to build it")
        }
        return try body(txn, db)
      }
    }
  }

  /// The anchor's sequence number, read in `txn`.
  func anchor(_ txn: Transaction) throws -> UInt64 {
    try MetaRecord.decode(try MetaRecord.values(in: txn, db: metaDB), path: path).anchor.seq
  }

  /// Where roots and proofs find each complete subtree's hash in `txn` (``TreeStorage/subtree(_:_:entries:anchor:path:)``).
  func source(_ txn: Transaction, _ db: Database) throws -> (Int, UInt64) throws -> [UInt8] {
    TreeStorage.subtree(txn, db, entries: entriesDB, anchor: try anchor(txn), path: path)
  }

  private func checkSize(_ size: UInt64, _ txn: Transaction, _ db: Database) throws {
    let stored = try TreeStorage.size(txn, db, entries: entriesDB, anchor: anchor(txn))
    guard size <= stored else {
      throw TreeError.outOfRange("\(path) has a tree of \(stored) entries, not \(size)")
    }
  }
}

/// Runs `body`, turning `LMDBError`s into ``LogError`` as every log operation does, and letting
/// ``TreeError`` and ``LogError`` through unchanged.
func treeStorage<R>(_ body: () throws -> R) throws -> R {
  do {
    return try body()
  } catch let error as LMDBError {
    return try storage { () throws -> R in throw error }
  }
}
