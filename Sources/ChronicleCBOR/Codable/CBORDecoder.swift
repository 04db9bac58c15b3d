import Foundation

/// Decodes `Decodable` values from CBOR (RFC 8949).
///
/// Malformed bytes throw `CBORError` (with the byte offset). Well-formed CBOR
/// that does not fit the requested type throws the standard `DecodingError`
/// (`typeMismatch`, `keyNotFound`, `valueNotFound` or `dataCorrupted`) with
/// the coding path of the offending value.
///
/// Besides everything `CBOREncoder` writes, the decoder accepts:
/// - indefinite-length strings, arrays and maps;
/// - map keys that are unsigned or negative integers, matched against
///   `CodingKey.intValue` or against their decimal text (when a map holds
///   several entries for one key, the first one is used);
/// - for `Double`: float16, float32, and integers that are exactly
///   representable; for `Float`: float16, float32, float64 values that convert
///   exactly (NaN stays NaN), and exactly representable integers;
/// - for integer types: any integer or float whose value fits the type exactly
///   (out-of-range values throw `dataCorrupted`, never trap);
/// - for `Date`: tag 1 or an untagged number (seconds since 1970), and RFC 9581
///   tag 1001 with base time under key 1 (number) or key 5 (bigfloat);
/// - for `UUID`: tag 37, a bare 16-byte byte string, or the UUID text form;
/// - for `URL`: tag 32 or a bare text string.
public struct CBORDecoder: Sendable {
  /// Creates a decoder.
  public init() {}

  /// Decodes a value of `type` from one CBOR data item spanning all of `bytes`.
  public func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
    if let decoded = try bytes.withContiguousStorageIfAvailable({ try decode(type, from: UnsafeRawBufferPointer($0)) }) {
      return decoded
    }
    return try decode(type, from: Array(bytes))
  }

  /// Decodes a value of `type` from one CBOR data item spanning all of `buffer`.
  public func decode<T: Decodable>(_ type: T.Type, from buffer: UnsafeRawBufferPointer) throws -> T {
    try CBORParser.validate(buffer)
    return try CBORStreamDecoder(copying: buffer).decode(type, at: 0) { .root }
  }

  /// Decodes a value of `type` from an already parsed CBOR value.
  func decode<T: Decodable>(_ type: T.Type, fromValue value: CBORValue) throws -> T {
    let impl = CBORDecoderImpl(value: value, path: .root)
    return try CBORUnbox.decode(type, from: value, impl: impl) { .root }
  }
}
