import Foundation
import LMDB

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
    /// The oldest entries (through `anchor`) are gone and so are the tree hashes that commit to them.
    case oldestRemovedWithoutTree(anchor: UInt64)
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
      case .oldestRemovedWithoutTree(let anchor):
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
  /// the removed entries): one pass over the first `checkpoint.size` entries.
  ///
  /// ```swift
  /// let result = try log.verify(checkpoint: note, verifier: logKey)
  /// for problem in result.problems { print(problem) }   // "entries removed from the end: …"
  /// ```
  ///
  /// - Throws: ``TreeError/malformedCheckpoint(_:)`` when the note's text is no checkpoint, and
  ///   storage errors; every difference between the log and the checkpoint is a ``CheckpointVerification/Problem``.
  public func verify(checkpoint note: SignedNote, verifier: NoteVerifier) throws -> CheckpointVerification {
    let checkpoint = try Checkpoint(parsing: note.text)
    var result = CheckpointVerification(checkpoint: checkpoint)
    do { try note.verify(by: verifier) } catch { result.problems.append(.badSignature("\(error)")) }
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
        } else if let db, let stored = try? MerkleFrontier(size: start, subtree: source(txn, db)) {
          frontier = stored
        } else {
          result.problems.append(.oldestRemovedWithoutTree(anchor: anchor.seq))
          return
        }
        var previous = anchor.hash
        var firstChanged: UInt64?
        var broken = false
        try txn.withCursor(on: entriesDB) { cursor in
          var item = try withSequenceKey(start + 1) { try cursor.seek(atLeast: $0) }
          var seq = start + 1
          var computed = [UInt8](repeating: 0, count: 32)
          while seq <= size {
            guard let (key, value) = item, (try? sequence(fromKey: key)) == seq, value.count >= 32 else {
              result.problems.append(.chainBroken(seq: seq))
              broken = true
              return
            }
            let body = UnsafeRawBufferPointer(rebasing: value[..<(value.count - 32)])
            previous.withUnsafeBytes { prev in
              computed.withUnsafeMutableBytes { Chain.hash(previous: prev, seq: seq, body: body, into: $0) }
            }
            let stored = Array(value.suffix(32))
            if !broken, computed != stored {
              result.problems.append(seq == start + 1 && start > 0 ? .anchorForged(anchor: start) : .chainBroken(seq: seq))
              broken = true
            }
            // The stored 16-entry subtrees tell where the first change lies.
            for completed in frontier.append(leaf: MerkleHash.leaf(seq: seq, value: value))
            where completed.level == TreeStorage.storedLevel && firstChanged == nil {
              if let db, let kept = try? txn.get(forKey: TreeStorage.key(level: completed.level, index: completed.index), in: db),
                kept != completed.hash
              {
                firstChanged = max(start + 1, completed.index * TreeStorage.storedWidth + 1)
              }
            }
            previous = stored
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

  /// `verify()`'s tree check: every stored subtree hash over the entries the log holds equals the
  /// one recomputed from them, and every subtree of ``TreeStorage/storedLevel`` and above that the
  /// tree's size covers is stored. A tree whose stored subtrees reach past the newest entry is
  /// reported; entries past the tree's size are not (a log an older writer appended to: the next
  /// writer extends the tree over them).
  func checkTree(into report: inout VerificationReport) throws {
    let anchor = try meta().anchor
    try treeStorage {
      try environment.read { txn in
        guard let db = try? txn.openDatabase(named: TreeStorage.treeName) else { return }
        let covered = try TreeStorage.coverage(txn, db)
        let end = try TreeStorage.lastEntry(txn, entriesDB, anchor: anchor.seq)
        if covered > end {
          report.add(
            .entry(end + 1),
            "the Merkle tree's stored hashes cover \(covered) entries but the log ends at \(end): "
              + "entries \(end + 1)…\(covered) at least were removed")
          return
        }
        let size = TreeStorage.size(covered: covered, end: end)
        // Complete subtrees starting at or after the anchor, recomputed level by level from the leaves.
        var hashes: [[UInt8]] = []
        var index = anchor.seq
        try txn.withCursor(on: entriesDB) { cursor in
          var item = try withSequenceKey(anchor.seq + 1) { try cursor.seek(atLeast: $0) }
          while index < size, let (key, value) = item, (try? sequence(fromKey: key)) == index + 1 {
            hashes.append(MerkleHash.leaf(seq: index + 1, value: value))
            index += 1
            item = try cursor.next()
          }
        }
        var height = 0
        var first = anchor.seq
        func check(_ position: UInt64, _ stored: [UInt8]?, _ hash: [UInt8]) {
          guard stored != hash else { return }
          let seq = (position << UInt64(height)) + 1
          report.add(
            .entry(seq),
            "the stored Merkle tree hash at level \(height), index \(position) (entries \(seq)…\(seq + (1 << UInt64(height)) - 1)) "
              + (stored == nil ? "is missing" : "differs from the one recomputed from the entries"))
        }
        while !hashes.isEmpty {
          if height >= TreeStorage.storedLevel {
            for (offset, hash) in hashes.enumerated() {
              let position = first + UInt64(offset)
              check(position, try txn.get(forKey: TreeStorage.key(level: height, index: position), in: db), hash)
            }
          } else {
            // Below the stored level only what is stored is compared (an append stores none of these).
            try txn.withCursor(on: db) { cursor in
              var item = try TreeStorage.key(level: height, index: first).withUnsafeBytes { try cursor.seek(atLeast: $0) }
              while let (key, value) = item, key.count == 9, key[0] == UInt8(height) {
                let position = key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard position - first < UInt64(hashes.count) else { break }
                check(position, Array(value), hashes[Int(position - first)])
                item = try cursor.next()
              }
            }
          }
          // The next level: pairs aligned within this level's run.
          var next: [[UInt8]] = []
          var offset = first % 2 == 1 ? 1 : 0
          while offset + 1 < hashes.count {
            next.append(MerkleHash.node(hashes[offset], hashes[offset + 1]))
            offset += 2
          }
          first = (first + 1) / 2
          hashes = next
          height += 1
        }
      }
    }
  }
}
