import Foundation

/// Writes CBOR data items one after another, in the shortest forms
/// ``CBOREncoder`` uses: for ``CBORCodable/encode(to:)``.
public struct CBORWriter: Sendable {
  /// The bytes written so far.
  public var bytes: [UInt8] { storage }

  /// ``bytes``, written in place by the inlinable methods below, which the app's own
  /// conformances inline: each an append or two, not a call into this module.
  @usableFromInline var storage: [UInt8] = []

  /// The error a nested value's `Encodable` conformance threw while a generated conformance
  /// wrote it (see `encodeField(_:_:)`), or `nil`. When it is set, ``bytes`` are not the
  /// value's: encode it through `Codable` instead, which throws the error.
  public internal(set) var failure: (any Error)?

  /// An empty writer.
  @inlinable public init() { storage.reserveCapacity(64) }

  /// Writes the header of a definite-length map of `count` key/value pairs; write the pairs next.
  @inlinable public mutating func encodeMapHeader(count: Int) { CBORHead.head(5, UInt64(count), into: &storage) }

  /// Writes the header of a definite-length array of `count` items; write the items next.
  @inlinable public mutating func encodeArrayHeader(count: Int) { CBORHead.head(4, UInt64(count), into: &storage) }

  /// Writes a text string.
  @inlinable public mutating func encode(_ value: String) { CBORHead.text(value, into: &storage) }

  /// Writes an integer.
  @inlinable public mutating func encode(_ value: Int) { CBORHead.int(Int64(value), into: &storage) }

  /// Writes an integer.
  @inlinable public mutating func encode(_ value: Int64) { CBORHead.int(value, into: &storage) }

  /// Writes an unsigned integer.
  @inlinable public mutating func encode(_ value: UInt64) { CBORHead.head(0, value, into: &storage) }

  /// Writes `true` or `false`.
  @inlinable public mutating func encode(_ value: Bool) { storage.append(value ? 0xf5 : 0xf4) }

  /// Writes a double-precision float, as `Codable` does for `Double`.
  public mutating func encode(_ value: Double) { CBORValue.float64(value).write(into: &storage) }

  /// Writes a single-precision float, as `Codable` does for `Float`.
  public mutating func encode(_ value: Float) { CBORValue.float32(value).write(into: &storage) }

  /// Writes `null` (what `Codable` writes for `nil`).
  @inlinable public mutating func encodeNil() { storage.append(0xf6) }

  /// Writes any `Encodable` value as Chronicle's `PayloadCodec.cbor` does (through its
  /// ``CBORCodable`` conformance if it has one): for nested values and the
  /// parts of a value without a hand-written form (dates, URLs).
  public mutating func encode<T: Encodable>(_ value: T) throws {
    storage.append(contentsOf: try CBORCodableDispatch.encode(value))
  }
}
