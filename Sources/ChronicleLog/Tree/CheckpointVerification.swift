import Foundation
import ChronicleLMDB

/// What ``ActionLog/verify(checkpoint:verifier:)`` found: whether the log still holds, unchanged,
/// the tree a signed checkpoint commits to.
public struct CheckpointVerification: Sendable, Hashable, CustomStringConvertible {
  /// One way the log differs from the checkpoint.
  public enum Problem: Sendable, Hashable, CustomStringConvertible {
    /// The checkpoint is not validly signed by the verifier's key.
    case badSignature(String)
    /// The log's origin (app and log id in meta) is not the checkpoint's: the log was relabelled.
    case originMismatch(checkpoint: String, log: String)
    /// The log ends before the checkpoint's size: its newest entries were removed.
    case entriesRemovedFromEnd(logEnd: UInt64, checkpointSize: UInt64)
    /// The oldest entries (through `anchor`) are gone and so are tree hashes that commit to them:
    /// `missing` names the first hash the checkpoint's root needs that the log does not hold (`nil`
    /// when the log has no tree at all). A compaction keeps the hashes of every stored checkpoint;
    /// a log compacted by an early version kept only its anchor's.
    case oldestRemovedWithoutTree(anchor: UInt64, missing: String?)
    /// The oldest entries (through `anchor`) are gone and the anchor does not fit the checkpointed
    /// entry after it: the anchor was forged (and the entries after it rewritten to follow it).
    case anchorForged(anchor: UInt64)
    /// Entry `seq` does not follow its predecessor's hash: it was changed in place.
    case chainBroken(seq: UInt64)
    /// The entries do not reproduce the checkpoint's root: the chain was rewritten with recomputed
    /// hashes. When the stored tree still tells, `firstChanged` is the first entry of the first
    /// stored 16-entry subtree that differs: the first change lies among the 16 entries from it.
    case chainRewritten(firstChanged: UInt64?)

    /// One sentence naming what is wrong.
    public var description: String {
      switch self {
      case .badSignature(let reason): "the checkpoint's signature: \(reason)"
      case .originMismatch(let checkpoint, let log):
        "meta relabelled: the checkpoint is of '\(checkpoint)' but the log is '\(log)'"
      case .entriesRemovedFromEnd(let end, let size):
        "entries removed from the end: the log ends at entry \(end) but the checkpoint covers \(size)"
      case .oldestRemovedWithoutTree(let anchor, let missing?):
        "oldest entries removed: entries 1…\(anchor) are gone, and so is a tree hash the checkpoint's root needs (\(missing))"
      case .oldestRemovedWithoutTree(let anchor, nil):
        "oldest entries removed: entries 1…\(anchor) are gone and so are the tree hashes that commit to them"
      case .anchorForged(let anchor):
        "oldest entries removed with a forged anchor: entry \(anchor + 1) does not match the checkpoint after anchor \(anchor)"
      case .chainBroken(let seq): "entry \(seq) was changed: it does not follow its predecessor's hash"
      case .chainRewritten(let first?):
        "chain rewritten: the entries differ from those the checkpoint's root commits to, first among entries \(first)…\((first - 1) / TreeStorage.storedWidth * TreeStorage.storedWidth + TreeStorage.storedWidth)"
      case .chainRewritten(nil): "chain rewritten: the entries do not reproduce the checkpoint's root"
      }
    }
  }

  /// The checkpoint checked.
  public var checkpoint: Checkpoint
  /// What is wrong, in the order found (empty when the log matches).
  public var problems: [Problem] = []
  /// The log's anchor: entries up to it were compacted away, and only the stored tree hashes commit to them.
  public var compactedThrough: UInt64 = 0

  /// `true` if the log holds the checkpointed tree unchanged.
  public var isValid: Bool { problems.isEmpty }

  /// `checkpoint: ok` or the problems, one per line.
  public var description: String {
    isValid ? "\(checkpoint): ok" : problems.map(\.description).joined(separator: "\n")
  }
}

extension ActionLog {
  /// Checks that this log holds, unchanged, the tree `checkpoint` commits to, recomputing its
  /// root from the entries themselves (and, left of a compaction's anchor, the stored hashes of
  /// the removed entries). A log that matches takes one pass over the first `checkpoint.size`
  /// entries that hashes each one's leaf (the entries then are, byte for byte, those the
  /// checkpoint commits to; a chain already broken when the checkpoint was signed is
  /// ``verify(progress:)``'s to report); one that does not takes a second pass, with the chain
  /// hashes, that names what differs.
  ///
  /// ```swift
  /// let result = try log.verify(checkpoint: note, verifier: logKey)
  /// for problem in result.problems { print(problem) }   // "entries removed from the end: …"
  /// ```
  ///
  /// A note whose signature does not verify with `verifier` is reported with that one problem
  /// (``CheckpointVerification/Problem/badSignature(_:)``) and not compared with the log: it may
  /// be a forgery, and blaming the log for not matching it would mislead.
  ///
  /// - Throws: ``TreeError/malformedCheckpoint(_:)`` when the note's text is no checkpoint, and
  ///   storage errors; every difference between the log and the checkpoint is a ``CheckpointVerification/Problem``.
  public func verify(checkpoint note: SignedNote, verifier: NoteVerifier) throws -> CheckpointVerification {
    let checkpoint = try Checkpoint(parsing: note.text)
    var result = CheckpointVerification(checkpoint: checkpoint)
    do { try note.verify(by: verifier) } catch {
      // A note the key did not sign says nothing about the log: it is compared with nothing.
      result.problems.append(.badSignature("\(error)"))
      return result
    }
    let meta = try meta()
    result.compactedThrough = meta.anchor.seq
    if let id = try logID() {
      let origin = Self.origin(appID: meta.appID, logID: id)
      if origin != checkpoint.origin { result.problems.append(.originMismatch(checkpoint: checkpoint.origin, log: origin)) }
    } else {
      result.problems.append(.originMismatch(checkpoint: checkpoint.origin, log: "(no log id)"))
    }
    let size = checkpoint.size
    let anchor = meta.anchor
    try treeStorage {
      try environment.read { txn in
        let end = try txn.withCursor(on: entriesDB) { try $0.last().map { try sequence(fromKey: $0.key) } } ?? anchor.seq
        guard end >= size else {
          result.problems.append(.entriesRemovedFromEnd(logEnd: end, checkpointSize: size))
          return
        }
        let db = try? txn.openDatabase(named: TreeStorage.treeName)
        let start = min(anchor.seq, size)
        var frontier: MerkleFrontier
        if start == 0 {
          frontier = MerkleFrontier()
        } else {
          do {
            guard let db else { throw TreeError.noTree(path: path, reason: "no tree database") }
            frontier = try MerkleFrontier(size: start, subtree: source(txn, db))
          } catch {
            var missing: String?
            if case TreeError.missingHash(_, let reason) = error { missing = reason }
            result.problems.append(.oldestRemovedWithoutTree(anchor: anchor.seq, missing: missing))
            return
          }
        }
        // The common case first: the entries reproduce the checkpoint's root (and the first one
        // follows the anchor), so they are, byte for byte, the entries the checkpoint commits
        // to and none of them was changed, rewritten or forged. Only the leaves are hashed.
        if try Self.reproduces(checkpoint.rootHash, txn, entriesDB, frontier: frontier, through: size, anchor: anchor) {
          return
        }
        // Otherwise the full pass names what differs: the chain hash and the leaf hash of every
        // entry, straight from the stored value, the hashes held inline.
        var previous = anchor.hash.count == MerkleHash.size ? MerkleDigest(anchor.hash) : MerkleDigest()
        var firstChanged: UInt64?
        var broken = false
        try txn.withCursor(on: entriesDB) { cursor in
          var item = try withSequenceKey(start + 1) { try cursor.seek(atLeast: $0) }
          var seq = start + 1
          var computed = MerkleDigest()
          while seq <= size {
            guard let (key, value) = item, (try? sequence(fromKey: key)) == seq, value.count >= 32 else {
              result.problems.append(.chainBroken(seq: seq))
              broken = true
              return
            }
            let body = UnsafeRawBufferPointer(rebasing: value[..<(value.count - 32)])
            let stored = UnsafeRawBufferPointer(rebasing: value[(value.count - 32)...])
            if !broken {
              previous.withUnsafeBytes { prev in
                computed.withUnsafeMutableBytes { Chain.hash(previous: prev, seq: seq, body: body, into: $0) }
              }
              if !computed.equals(stored) {
                result.problems.append(seq == start + 1 && start > 0 ? .anchorForged(anchor: start) : .chainBroken(seq: seq))
                broken = true
              }
            }
            // The stored 16-entry subtrees tell where the first change lies.
            frontier.append(
              leaf: MerkleHash.leafDigest(seq: seq, value: value), reportingFrom: TreeStorage.storedLevel
            ) { level, index, hash in
              guard level == TreeStorage.storedLevel, firstChanged == nil, let db else { return }
              if (try? TreeStorage.stored(level: level, index: index, equals: hash, txn, db)) == false {
                firstChanged = max(start + 1, index * TreeStorage.storedWidth + 1)
              }
            }
            previous = MerkleDigest(stored)
            seq += 1
            item = try cursor.next()
          }
        }
        if !broken, frontier.root != checkpoint.rootHash {
          // The first changed subtree holds the entry after the anchor: the anchor does not fit it.
          if let firstChanged, firstChanged == start + 1, start > 0 {
            result.problems.append(.anchorForged(anchor: start))
          } else {
            result.problems.append(.chainRewritten(firstChanged: firstChanged))
          }
        }
      }
    }
    return result
  }

  /// Whether the entries after `anchor` through `size`, as leaves after `frontier` (the tree of
  /// the entries up to the anchor), reproduce `root`, and the first of them follows the anchor's
  /// hash. One pass that hashes each leaf once and allocates nothing per entry.
  static func reproduces(
    _ root: [UInt8], _ txn: Transaction, _ entries: Database, frontier: MerkleFrontier, through size: UInt64,
    anchor: ChainAnchor
  ) throws -> Bool {
    let start = frontier.size
    var frontier = frontier
    let complete = try txn.withCursor(on: entries) { cursor -> Bool in
      var item = try withSequenceKey(start + 1) { try cursor.seek(atLeast: $0) }
      var seq = start + 1
      while seq <= size {
        guard let (key, value) = item, (try? sequence(fromKey: key)) == seq, value.count >= MerkleHash.size else {
          return false
        }
        if seq == start + 1 {
          guard anchor.seq == start, anchor.hash.count == MerkleHash.size else { return false }
          var computed = MerkleDigest()
          anchor.hash.withUnsafeBytes { previous in
            computed.withUnsafeMutableBytes {
              Chain.hash(
                previous: previous, seq: seq, body: UnsafeRawBufferPointer(rebasing: value[..<(value.count - 32)]), into: $0)
            }
          }
          guard computed.equals(UnsafeRawBufferPointer(rebasing: value[(value.count - 32)...])) else { return false }
        }
        frontier.append(leaf: MerkleHash.leafDigest(seq: seq, value: value), reportingFrom: 64) { _, _, _ in }
        seq += 1
        item = try cursor.next()
      }
      return true
    }
    return complete && frontier.root == root
  }

  /// `verify()`'s tree check: every stored subtree hash over the entries the log holds equals the
  /// one recomputed from them, and every subtree of ``TreeStorage/storedLevel`` and above that the
  /// tree's size covers is stored. A tree whose stored subtrees reach past the newest entry is
  /// reported; entries past the tree's size are not (a log an older writer appended to: the next
  /// writer extends the tree over them). One streaming pass over the entries, in short read
  /// transactions: its memory is
  /// bounded by the tree's height whatever the log's length.
  func checkTree(into report: inout VerificationReport) throws {
    let anchor = try meta().anchor
    let found: (covered: UInt64, end: UInt64)? = try treeStorage {
      try environment.read { txn in
        guard let db = try? txn.openDatabase(named: TreeStorage.treeName) else { return nil }
        return (try TreeStorage.coverage(txn, db), try TreeStorage.lastEntry(txn, entriesDB, anchor: anchor.seq))
      }
    }
    guard let (covered, end) = found else { return }
    if covered > end {
      report.add(
        .entry(end + 1),
        "the Merkle tree's stored hashes cover \(covered) entries but the log ends at \(end): "
          + "entries \(end + 1)…\(covered) at least were removed")
      return
    }
    let size = TreeStorage.size(covered: covered, end: end)
    // Complete subtrees starting at or after the anchor, recomputed from the leaves in one
    // streaming pass (memory bounded by the tree's height, not the log's length): the
    // pending subtrees are kept on a stack, and two of one level join when the left one is
    // aligned. Those that start left of the anchor never join (their left sibling is not
    // recomputed) and stay at the bottom of the stack.
    // The problems are reported level by level, as a level-by-level walk finds them; each
    // level keeps no more than the report can hold.
    var problems = [[(UInt64, String)]](repeating: [], count: 64)
    var overflow = false
    func check(_ height: Int, _ position: UInt64, _ stored: Bool?) {
      guard stored != true else { return }
      guard problems[height].count < VerificationReport.maxProblems else {
        overflow = true
        return
      }
      let seq = (position << UInt64(height)) + 1
      problems[height].append(
        (
          seq,
          "the stored Merkle tree hash at level \(height), index \(position) (entries \(seq)…\(seq + (1 << UInt64(height)) - 1)) "
            + (stored == nil ? "is missing" : "differs from the one recomputed from the entries")
        ))
    }
    var pending: [(level: Int, index: UInt64, hash: MerkleDigest)] = []
    pending.reserveCapacity(128)
    var index = anchor.seq
    // The leaves in read transactions of at most `scanChunk` entries (entries and stored subtrees
    // never change once written): a long check does not keep a writer from reusing freed pages.
    var more = true
    while more {
      try treeStorage {
        try environment.read { txn in
          guard let db = try? txn.openDatabase(named: TreeStorage.treeName) else { return }
          try txn.withCursor(on: entriesDB) { cursor in
            var item = try withSequenceKey(index + 1) { try cursor.seek(atLeast: $0) }
            var read: UInt64 = 0
            while index < size, read < Self.scanChunk, let (key, value) = item, (try? sequence(fromKey: key)) == index + 1 {
              var node = (level: 0, index: index, hash: MerkleHash.leafDigest(seq: index + 1, value: value))
              while node.index & 1 == 1, let left = pending.last, left.level == node.level, left.index == node.index - 1 {
                pending.removeLast()
                node = (level: node.level + 1, index: node.index >> 1, hash: MerkleHash.nodeDigest(left.hash, node.hash))
                if node.level >= TreeStorage.storedLevel {
                  check(node.level, node.index, try TreeStorage.stored(level: node.level, index: node.index, equals: node.hash, txn, db))
                }
              }
              pending.append(node)
              index += 1
              read += 1
              item = try cursor.next()
            }
            more = read == Self.scanChunk && index < size
          }
        }
      }
    }
    // Below the stored level only what is stored is compared (an append stores none of
    // these): each stored hash over the leaves read, recomputed from its (at most 8) entries.
    let reached = index
    try treeStorage {
      try environment.read { txn in
        guard let db = try? txn.openDatabase(named: TreeStorage.treeName) else { return }
        let source = TreeStorage.subtree(txn, db, entries: entriesDB, anchor: anchor.seq, path: path)
        for height in 0..<TreeStorage.storedLevel {
          // The first subtree of this level that starts at or after the anchor (no overflow near 2^64).
          let firstPosition = anchor.seq >> UInt64(height) + (anchor.seq & ((1 << UInt64(height)) - 1) == 0 ? 0 : 1)
          try txn.withCursor(on: db) { cursor in
            var item = try TreeStorage.key(level: height, index: firstPosition).withUnsafeBytes { try cursor.seek(atLeast: $0) }
            while let (key, value) = item, key.count == 9, key[0] == UInt8(height) {
              let position = key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
              guard position < reached >> UInt64(height) else { break }
              let hash = MerkleDigest(try source(height, position))
              check(height, position, hash.equals(value))
              item = try cursor.next()
            }
          }
        }
      }
    }
    for (seq, message) in problems.joined() { report.add(.entry(seq), message) }
    // More than the report holds: this one only marks it truncated.
    if overflow { report.add(.entry(anchor.seq + 1), "more stored Merkle tree hashes differ") }
  }
}
