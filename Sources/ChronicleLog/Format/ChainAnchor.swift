import Foundation

/// The hash of the last entry before the first one a log holds.
public struct ChainAnchor: Sendable, Hashable {
  /// The sequence number the hash belongs to (0 if no entry was ever removed).
  public var seq: UInt64
  /// The hash of entry ``seq``: the "previous hash" of entry `seq + 1`.
  public var hash: [UInt8]

  /// The anchor of a log that was never compacted.
  public static let genesis = ChainAnchor(seq: 0, hash: Chain.genesis)

  /// Creates an anchor.
  public init(seq: UInt64, hash: [UInt8]) {
    self.seq = seq
    self.hash = hash
  }
}
