import Foundation
import ChronicleLMDB

// MARK: - A verified prefix

/// What a verification established about a log, so a later check reads only the entries written
/// since: the log's identity, the last verified entry and the size of the verified Merkle tree.
///
/// ```swift
/// let report = try log.verify()
/// var verified = try log.verifiedPrefix(head: report.range?.upperBound ?? 0, hash: report.head)
/// // … the log grows …
/// if let growth = try log.verifyGrowth(from: verified) {
///   verified = growth.prefix  // growth.report lists the problems of the new entries only
/// }
/// ```
public struct VerifiedPrefix: Sendable, Hashable {
  /// The log's identifier (`nil` for a log without one).
  public var logID: [UInt8]?
  /// The chain's anchor when the prefix was verified: compaction moves it.
  public var anchor: ChainAnchor
  /// The last verified entry (the anchor itself for an empty log).
  public var head: ChainAnchor
  /// The size of the verified Merkle tree (0 for a log without a tree).
  public var treeSize: UInt64

  /// A prefix with these parts.
  public init(logID: [UInt8]?, anchor: ChainAnchor, head: ChainAnchor, treeSize: UInt64) {
    self.logID = logID
    self.anchor = anchor
    self.head = head
    self.treeSize = treeSize
  }
}

/// The check of the entries appended after a ``VerifiedPrefix``: its report and the prefix to
/// extend next time.
public struct GrowthVerification: Sendable, Hashable {
  /// The problems among the new entries, their snapshots and the tree that covers them;
  /// `entriesChecked` counts the new entries only.
  public var report: VerificationReport
  /// The prefix verified now: to pass on the next call while the report is valid.
  public var prefix: VerifiedPrefix
}

extension ActionLog {
  /// The prefix a verification that ended at entry `head` with chain hash `hash` established
  /// (``VerificationReport/range`` and ``VerificationReport/head`` of a valid ``verify(progress:)``
  /// report, possibly run by another process). Its tree is the stored tree up to `head`.
  public func verifiedPrefix(head: UInt64, hash: [UInt8]) throws -> VerifiedPrefix {
    let meta = try meta()
    let id = try logID()
    let size = (try? treeSize) ?? 0
    let top = max(head, meta.anchor.seq)
    return VerifiedPrefix(
      logID: id, anchor: meta.anchor, head: top == meta.anchor.seq ? meta.anchor : ChainAnchor(seq: head, hash: hash),
      treeSize: min(size, top))
  }

  /// Checks only what was appended after `prefix`: the new entries' sequence numbers and chain
  /// hashes from the prefix's head, the new snapshots' ties to the chain, and the stored Merkle tree
  /// grown from the prefix's size against the new entries.
  ///
  /// - Returns: `nil` when the log is no longer the one `prefix` describes (another identifier, a
  ///   moved anchor after compaction, or a different hash at the prefix's head: a replaced or
  ///   rewritten log): verify it from the start with ``verify(progress:)``.
  public func verifyGrowth(from prefix: VerifiedPrefix) throws -> GrowthVerification? {
    let meta = try meta()
    guard meta.anchor == prefix.anchor, try logID() == prefix.logID else { return nil }
    var report = VerificationReport()
    var previous = prefix.head
    var newHashes: [UInt64: [UInt8]] = [:]
    let replaced: Bool = try storage {
      try environment.read { txn in
        if prefix.head.seq != meta.anchor.seq {
          let stored: [UInt8]? = try withSequenceKey(prefix.head.seq) { key in
            try txn.withValue(forKey: key, in: entriesDB) { value in
              (try? EntryFormat.parse(value, seq: prefix.head.seq)).map { Array($0.hash) }
            }
          } ?? nil
          if stored != prefix.head.hash { return true }
        }
        var snapshotSeqs: [UInt64] = []
        try txn.withCursor(on: snapshotsDB) { cursor in
          var item = try withSequenceKey(prefix.head.seq &+ 1) { try cursor.seek(atLeast: $0) }
          while let (key, _) = item, prefix.head.seq != .max {
            snapshotSeqs.append(try sequence(fromKey: key))
            item = try cursor.next()
          }
        }
        let snapshotSet = Set(snapshotSeqs)
        var computed = [UInt8](repeating: 0, count: 32)
        try txn.withCursor(on: entriesDB) { cursor in
          guard prefix.head.seq != .max else { return }
          var item = try withSequenceKey(prefix.head.seq + 1) { try cursor.seek(atLeast: $0) }
          while let (key, value) = item {
            defer { item = try? cursor.next() }
            guard key.count == 8, let seq = try? sequence(fromKey: key) else {
              report.add(.entry(previous.seq &+ 1), "a key of \(key.count) bytes where an 8-byte seq belongs")
              continue
            }
            report.entriesChecked += 1
            report.range = (report.range?.lowerBound ?? seq)...seq
            if seq != previous.seq &+ 1 {
              report.add(.entry(previous.seq &+ 1), "missing: the next entry found is \(seq)")
            }
            guard let view = try? EntryFormat.parse(value, seq: seq) else {
              report.add(.entry(seq), "unreadable header")
              previous = ChainAnchor(seq: seq, hash: value.count >= 32 ? Array(value.suffix(32)) : Chain.genesis)
              continue
            }
            previous.hash.withUnsafeBytes { prev in
              computed.withUnsafeMutableBytes { Chain.hash(previous: prev, seq: seq, body: view.body, into: $0) }
            }
            if !computed.elementsEqual(view.hash) {
              report.add(.entry(seq), "hash mismatch: the entry's bytes or its predecessor's hash were changed")
            }
            previous = ChainAnchor(seq: seq, hash: Array(view.hash))
            if snapshotSet.contains(seq) { newHashes[seq] = previous.hash }
          }
        }
        for seq in snapshotSeqs {
          report.snapshotsChecked += 1
          let snapshot = try withSequenceKey(seq) { key in
            try txn.withValue(forKey: key, in: snapshotsDB) {
              try? SnapshotFormat.decode(seq: seq, value: $0, sealedAsEmpty: true)
            }
          } ?? nil
          guard let snapshot else {
            report.add(.snapshot(seq), "unreadable: its checksum or layout is wrong")
            continue
          }
          if let expected = newHashes[seq] {
            if expected != snapshot.chainHash { report.add(.snapshot(seq), "its chain hash differs from entry \(seq)'s hash") }
          } else {
            report.add(.snapshot(seq), "the log holds no entry \(seq) for it to follow")
          }
        }
        return false
      }
    }
    if replaced { return nil }
    report.head = previous.hash
    var grown = prefix
    grown.head = previous
    if report.isValid { grown.treeSize = try checkTreeGrowth(from: prefix.treeSize, into: &report) }
    return GrowthVerification(report: report, prefix: report.isValid ? grown : prefix)
  }

  /// Rebuilds the tree's frontier at the verified size `from` from its stored subtrees, appends the
  /// leaves of the entries after it and compares the root with the stored tree's root at the new
  /// size. Returns the size now verified.
  private func checkTreeGrowth(from size: UInt64, into report: inout VerificationReport) throws -> UInt64 {
    guard let newSize = try? treeSize, newSize > size else { return size }
    return try readTree { txn, db in
      let subtree = try source(txn, db)
      var frontier = try MerkleFrontier(size: size, subtree: subtree)
      try txn.withCursor(on: entriesDB) { cursor in
        var item = try withSequenceKey(size + 1) { try cursor.seek(atLeast: $0) }
        var next = size + 1
        while next <= newSize, let (key, value) = item, (try? sequence(fromKey: key)) == next {
          frontier.append(leaf: MerkleHash.leafDigest(seq: next, value: value)) { _, _, _ in }
          next += 1
          item = try cursor.next()
        }
      }
      guard frontier.size == newSize else {
        report.add(.entry(frontier.size + 1), "the Merkle tree covers \(newSize) entries but entry \(frontier.size + 1) cannot be read")
        return size
      }
      if frontier.root != (try MerkleTree.root(size: newSize, subtree: subtree)) {
        report.add(
          .entry(size + 1),
          "the stored Merkle tree of \(newSize) entries differs from the one grown from \(size) with the new entries")
        return size
      }
      return newSize
    }
  }
}
