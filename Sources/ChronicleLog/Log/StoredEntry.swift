import Foundation

/// One stored entry of a log, as read back: everything the format records,
/// readable without the app's Swift types.
public struct StoredEntry: Sendable, Hashable {
  /// The sequence number: 1 for the first entry, gapless.
  public var seq: UInt64
  /// When the entry was appended, in microseconds since 1970-01-01 UTC.
  public var timestamp: Int64
  /// What the entry records.
  public var kind: EntryKind
  /// Per-entry flags.
  public var flags: EntryFlags
  /// The codec of ``payload``.
  public var codec: PayloadCodec
  /// The app's action schema version the payload was written with.
  public var schemaVersion: UInt32
  /// The action's type name, e.g. `increment`.
  public var typeName: String
  /// Audit metadata (who, why, …).
  public var metadata: [String: String]
  /// The encoded action (or, for restore/undo/redo, the target).
  public var payload: [UInt8]
  /// SHA-256 over the previous entry's hash, this sequence number and this entry's bytes.
  public var hash: [UInt8]
  /// For an entry of an encrypted log that the reader's key ring cannot open (read with
  /// ``ActionLog/Options/returnsSealedEntries``), the identifier of the key that sealed it; its
  /// metadata and payload are then empty, and its type name is the clear one (empty when sealed).
  /// `nil` for every entry that was read in full.
  public var sealedKeyID: UInt32? = nil

  /// ``timestamp`` as a `Date`.
  public var date: Date { Date(microsecondsSince1970: timestamp) }

  /// The payload as JSON text, whatever its codec.
  public func payloadJSON(prettyPrinted: Bool = false) throws -> String {
    try codec.renderJSON(payload, prettyPrinted: prettyPrinted)
  }
}
