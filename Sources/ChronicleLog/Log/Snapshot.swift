import Crypto
import Foundation

/// An encoded state at a sequence number, with the chain hash at that point.
///
/// The engine writes one every `snapshotEvery` entries so that opening a log
/// replays only the entries after the newest snapshot.
public struct Snapshot: Sendable, Hashable {
  /// The sequence number of the last entry folded into ``state``.
  public var seq: UInt64
  /// When the snapshot was written, µs since 1970.
  public var timestamp: Int64
  /// The codec of ``state``.
  public var codec: PayloadCodec
  /// The app's state schema version the state was written with.
  public var schemaVersion: UInt32
  /// The hash of entry ``seq``: ties the snapshot to the chain.
  public var chainHash: [UInt8]
  /// The encoded state.
  public var state: [UInt8]
  /// Engine-defined extra data kept with the state (for example undo and redo stacks); may be empty.
  public var auxiliary: [UInt8]

  /// ``timestamp`` as a `Date`.
  public var date: Date { Date(microsecondsSince1970: timestamp) }
}
