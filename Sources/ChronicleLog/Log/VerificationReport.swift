import Foundation
import ChronicleLMDB

/// What ``ActionLog/verify(progress:)`` found.
public struct VerificationReport: Sendable, Hashable {
  /// Where a problem is.
  public enum Location: Sendable, Hashable, CustomStringConvertible {
    /// An entry, by sequence number.
    case entry(UInt64)
    /// A snapshot, by the sequence number it was taken at.
    case snapshot(UInt64)
    /// The meta data.
    case meta

    /// `entry 12`, `snapshot 1000`, `meta`.
    public var description: String {
      switch self {
      case .entry(let seq): "entry \(seq)"
      case .snapshot(let seq): "snapshot \(seq)"
      case .meta: "meta"
      }
    }
  }

  /// One problem: where and what.
  public struct Problem: Sendable, Hashable, CustomStringConvertible {
    /// Where it is.
    public var location: Location
    /// What is wrong.
    public var message: String
    /// `entry 12: hash mismatch …`.
    public var description: String { "\(location): \(message)" }

    /// Creates a problem (for tools that carry reports between processes).
    package init(location: Location, message: String) {
      self.location = location
      self.message = message
    }
  }

  /// Entries whose headers were parsed and hashes recomputed.
  public var entriesChecked = 0
  /// Snapshots whose checksums and chain hashes were checked.
  public var snapshotsChecked = 0
  /// The first and last sequence numbers found.
  public var range: ClosedRange<UInt64>?
  /// The hash of the last entry (the anchor's for an empty log): record it elsewhere to detect a rewritten chain.
  public var head: [UInt8] = []
  /// The problems found, in log order (entries first, then snapshots), at most ``maxProblems``.
  public var problems: [Problem] = []
  /// Whether more problems were found than were recorded.
  public var truncated = false

  /// How many problems a report records.
  public static let maxProblems = 100

  /// `true` if nothing is wrong.
  public var isValid: Bool { problems.isEmpty }

  /// The first entry with a problem.
  public var firstBadSeq: UInt64? {
    for problem in problems { if case .entry(let seq) = problem.location { return seq } }
    return nil
  }

  /// An empty report (for tools that carry reports between processes).
  package init() {}

  /// Records a problem, or marks the report truncated past ``maxProblems``.
  package mutating func add(_ location: Location, _ message: String) {
    if problems.count < Self.maxProblems {
      problems.append(Problem(location: location, message: message))
    } else {
      truncated = true
    }
  }
}
