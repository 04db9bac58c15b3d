import Foundation

/// A temporary file or directory an interrupted import or compaction left behind:
/// ``ActionLog/leftovers(of:)`` lists them, `logtool info` reports them.
public struct TransferLeftover: Sendable, Hashable {
  /// What made it.
  public enum Origin: String, Sendable, Hashable {
    /// An import's hidden directory beside the log, `.NAME.import-PID-RANDOM`.
    case `import`
    /// A compaction's work directory inside the log, `.compact-tmp`.
    case compaction
    /// A rekey's work directory inside the log, `.rekey-tmp`.
    case rekey
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
