import Foundation

/// Encodes `Encodable` values as deterministic CBOR (RFC 8949).
///
/// These rules define Chronicle's on-disk payload format; changing any of
/// them changes the bytes written to the log.
///
/// - Integers: every `Int*`/`UInt*` width is written as major type 0 or 1 in
///   the shortest argument form.
/// - `Double` is always a float64 (`0xfb`) and `Float` always a float32
///   (`0xfa`), never shortened, so bytes are predictable and round trips are
///   bit-exact (−0.0, infinities, NaN, subnormals, extreme magnitudes).
/// - `Bool` is `0xf4`/`0xf5`; `nil` is `null` (`0xf6`); `String` is a text string.
/// - Keyed containers become maps whose keys are the text
///   `CodingKey.stringValue`, in the order first encoded. Encoding a key a
///   second time replaces its value in place.
/// - Unkeyed containers become definite-length arrays. `superEncoder()` uses
///   the key `"super"`. A value that encodes nothing becomes an empty map.
/// - `Data` is a byte string.
/// - `Date` is tag 1 wrapping a float64 of seconds since 1970-01-01T00:00Z.
///   When that float64 cannot reproduce the `Date` exactly (a `Date` is a
///   float64 counted from 2001, and the 1970 epoch shifts the rounding), the
///   date is written as RFC 9581 extended time instead: tag 1001 wrapping
///   `{5: [e, m]}`, the base time as the exact bigfloat `m × 2^e` seconds since
///   1970 (`e` is the exponent of the interval's lowest set bit when it has a
///   fractional part, else 0; `m` is an integer, or a tag 2/3 bignum when it
///   needs more than 64 bits, as for dates near 2001 with sub-2^-32 s detail).
///   Either way the decoded `Date` has the identical interval (−0.0 comes
///   back as 0.0, which compares equal). Non-finite dates use tag 1.
/// - `UUID` is tag 37 wrapping its 16 bytes; `URL` is tag 32 wrapping its
///   `absoluteString`.
/// - Only definite lengths are written; nothing is sorted.
public struct CBOREncoder: Sendable {
  /// Creates an encoder.
  public init() {}

  /// Encodes `value` as one CBOR data item.
  public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    let stream = CBORStreamEncoder()
    do {
      try stream.write(value, at: .root)
      if !stream.needsTree { return stream.out }
    } catch where stream.needsTree {
      // The tree encoder below meets the same error, or none: its result is the one that counts.
    }
    return try treeEncode(value)
  }

  /// The reference encoder: builds the value's tree, then writes it. It
  /// supports every `Encodable` form (a key encoded twice replaces its value).
  func treeEncode<T: Encodable>(_ value: T) throws -> [UInt8] {
    let node: CBOREncodingNode
    if let special = CBORSpecialEncoding.value(of: value) {
      node = .value(special)
    } else {
      let impl = CBOREncoderImpl(path: .root)
      node = try impl.encodeComplex(value, at: .root)
    }
    var out: [UInt8] = []
    out.reserveCapacity(128)
    node.write(into: &out)
    return out
  }
}
