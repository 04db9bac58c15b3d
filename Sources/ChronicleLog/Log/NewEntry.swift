import Foundation

/// An entry to append: everything but the sequence number and the hash, which the log assigns.
///
/// ```swift
/// let entry = try NewEntry(action: Counter.Action.increment, typeName: "increment", codec: .cbor)
/// let seq = try log.append(entry)
/// ```
public struct NewEntry: Sendable, Hashable {
  /// What the entry records.
  public var kind: EntryKind
  /// Per-entry flags.
  public var flags: EntryFlags
  /// The action's type name.
  public var typeName: String
  /// Audit metadata.
  public var metadata: [String: String]
  /// The codec of ``payload``.
  public var codec: PayloadCodec
  /// The action schema version of ``payload``.
  public var schemaVersion: UInt32
  /// The encoded payload.
  public var payload: [UInt8]
  /// Microseconds since 1970; `nil` takes the time of the append.
  public var timestamp: Int64?

  /// Creates an entry from an already encoded payload.
  public init(
    kind: EntryKind = .action, flags: EntryFlags = [], typeName: String, metadata: [String: String] = [:],
    codec: PayloadCodec, schemaVersion: UInt32 = 1, payload: [UInt8], timestamp: Int64? = nil
  ) {
    self.kind = kind
    self.flags = flags
    self.typeName = typeName
    self.metadata = metadata
    self.codec = codec
    self.schemaVersion = schemaVersion
    self.payload = payload
    self.timestamp = timestamp
  }

  /// Creates an entry by encoding `value` with `codec`.
  ///
  /// - Throws: ``LogError/codec(codec:typeName:underlying:)`` if the value does not encode.
  public init<T: Encodable>(
    kind: EntryKind = .action, flags: EntryFlags = [], encoding value: T, typeName: String,
    metadata: [String: String] = [:], codec: PayloadCodec, schemaVersion: UInt32 = 1, timestamp: Int64? = nil
  ) throws {
    let payload: [UInt8]
    do {
      payload = try codec.encode(value)
    } catch {
      throw LogError.codec(codec: codec, typeName: typeName, underlying: error)
    }
    self.init(
      kind: kind, flags: flags, typeName: typeName, metadata: metadata, codec: codec,
      schemaVersion: schemaVersion, payload: payload, timestamp: timestamp)
  }
}
