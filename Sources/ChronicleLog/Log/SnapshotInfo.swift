import Crypto
import Foundation

/// A snapshot's description without its state bytes.
public struct SnapshotInfo: Sendable, Hashable {
  /// The sequence number it was taken at.
  public var seq: UInt64
  /// When it was written, µs since 1970.
  public var timestamp: Int64
  /// The codec of the state.
  public var codec: PayloadCodec
  /// The state schema version.
  public var schemaVersion: UInt32
  /// The size of the stored value in bytes.
  public var size: Int
}
