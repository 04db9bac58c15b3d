#if LogTool
import ChronicleLog
import Foundation

/// A log's verification as JSON: what `verify --json` prints and what the inspector's
/// `/api/verify` serves as its `chain`.
///
/// ```swift
/// let report = VerifyReport(path: log.path, anchor: try log.meta().anchor, report: try log.verify())
/// print(report.json)   // {"anchor":{…},"entriesChecked":300,…,"valid":true}
/// ```
///
/// The keys are sorted. `range`, `anchor` and `firstBadSeq` are `null` when there is none;
/// `checkpoints`, `incremental` and `seconds` are left out when there is none.
package struct VerifyReport: Codable, Sendable, Equatable {
  /// The first and last entry checked.
  package struct Range: Codable, Sendable, Equatable {
    /// The first entry checked.
    package var first: UInt64
    /// The last entry checked.
    package var last: UInt64
  }

  /// The chain's anchor: the entry the chain starts after, and its hash in hex.
  package struct Anchor: Codable, Sendable, Equatable {
    /// The anchor's sequence number (0 for a log never compacted).
    package var seq: UInt64
    /// The anchor's hash in hex.
    package var hash: String
  }

  /// One problem: where (`entry 42`, `snapshot 100`, `meta`, `log`) and what.
  package struct Problem: Codable, Sendable, Equatable {
    /// Where the problem is.
    package var location: String
    /// What is wrong.
    package var message: String
  }

  /// Whether the log still holds one signed checkpoint's tree (`verify --checkpoint`).
  package struct Checkpoint: Codable, Sendable, Equatable {
    /// One way the log fails the checkpoint: its name and its sentence.
    package struct Problem: Codable, Sendable, Equatable {
      /// The problem's name (`rewritten`, `badSignature`, …).
      package var name: String
      /// What is wrong.
      package var message: String
    }
    /// The checkpoint file.
    package var file: String
    /// The checkpoint's origin.
    package var origin: String
    /// The checkpoint's tree size.
    package var treeSize: UInt64
    /// The checkpoint's root hash in hex.
    package var rootHash: String
    /// Whether the log holds the checkpoint's tree unchanged.
    package var valid: Bool
    /// The last entry compacted away whose stored tree hashes still match (0 for none).
    package var compactedThrough: UInt64
    /// Why the log does not hold it.
    package var problems: [Problem]
  }

  /// A report extended by checking only the entries after `after` (the inspector's growing log).
  package struct Incremental: Codable, Sendable, Equatable {
    /// The last entry of the report that was extended.
    package var after: UInt64
    /// The entries checked this time.
    package var entriesChecked: Int
  }

  /// The log directory.
  package var path: String
  /// Whether the chain, every snapshot and every checkpoint hold.
  package var valid: Bool
  /// The entries checked.
  package var entriesChecked: Int = 0
  /// The snapshots checked.
  package var snapshotsChecked: Int = 0
  /// The first and last entry checked, `nil` for an empty log.
  package var range: Range?
  /// The chain's anchor, `nil` when the log could not be read.
  package var anchor: Anchor?
  /// The last entry's chain hash in hex.
  package var head: String = ""
  /// The first entry with a problem.
  package var firstBadSeq: UInt64?
  /// The problems, at most a bounded number of them.
  package var problems: [Problem] = []
  /// Whether more problems were found than are listed.
  package var truncated: Bool = false
  /// The checkpoints checked (`verify --checkpoint`), `nil` for none.
  package var checkpoints: [Checkpoint]?
  /// Set when only the entries after a valid report were checked.
  package var incremental: Incremental?
  /// How long the check took, in seconds (to the millisecond).
  package var seconds: Double?

  /// The report of `report`, a verification of the log at `path` whose chain starts at `anchor`.
  package init(path: String, anchor: ChainAnchor?, report: VerificationReport) {
    self.path = path
    valid = report.isValid
    entriesChecked = report.entriesChecked
    snapshotsChecked = report.snapshotsChecked
    range = report.range.map { Range(first: $0.lowerBound, last: $0.upperBound) }
    self.anchor = anchor.map { Anchor(seq: $0.seq, hash: $0.hash.hex) }
    head = report.head.hex
    firstBadSeq = report.firstBadSeq
    problems = report.problems.map { Problem(location: $0.location.description, message: $0.message) }
    truncated = report.truncated
  }

  /// A report of a log that could not be read at all: one problem at `log`.
  package init(path: String, unreadable message: String) {
    self.path = path
    valid = false
    problems = [Problem(location: "log", message: message)]
  }

  /// The report in `json`.
  package init(json: String) throws {
    self = try JSONDecoder().decode(Self.self, from: Data(json.utf8))
  }

  /// Adds the check of the entries after this valid report's last entry, `after`.
  package mutating func extend(with growth: VerificationReport, after: UInt64) {
    valid = growth.isValid
    entriesChecked += growth.entriesChecked
    snapshotsChecked += growth.snapshotsChecked
    if let grown = growth.range {
      range = Range(first: range?.first ?? grown.lowerBound, last: grown.upperBound)
      head = growth.head.hex
    }
    if let seq = growth.firstBadSeq { firstBadSeq = seq }
    problems = growth.problems.map { Problem(location: $0.location.description, message: $0.message) }
    truncated = growth.truncated
    incremental = Incremental(after: after, entriesChecked: growth.entriesChecked)
  }

  /// One line of JSON, keys sorted.
  package var json: String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Every field is a string, a number, a Boolean or an array or object of them: encoding cannot fail.
    return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
  }

  /// Encodes every field, `range`, `anchor` and `firstBadSeq` as `null` when absent.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(path, forKey: .path)
    try container.encode(valid, forKey: .valid)
    try container.encode(entriesChecked, forKey: .entriesChecked)
    try container.encode(snapshotsChecked, forKey: .snapshotsChecked)
    try container.encode(range, forKey: .range)
    try container.encode(anchor, forKey: .anchor)
    try container.encode(head, forKey: .head)
    try container.encode(firstBadSeq, forKey: .firstBadSeq)
    try container.encode(problems, forKey: .problems)
    try container.encode(truncated, forKey: .truncated)
    try container.encodeIfPresent(checkpoints, forKey: .checkpoints)
    try container.encodeIfPresent(incremental, forKey: .incremental)
    try container.encodeIfPresent(seconds, forKey: .seconds)
  }
}
#endif  // LogTool
