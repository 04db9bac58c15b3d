import Foundation

/// A type that writes and reads its own CBOR: the fast path for the actions an
/// app sends and replays most.
///
/// Through `Codable`, encoding an action costs about 1 µs and decoding one
/// about 1.5 µs, most of it in the standard library's keyed containers: that is
/// most of a replay's time and much of an append's. A conformance writes and
/// reads the bytes directly, for a few dozen nanoseconds.
///
/// Chronicle's `PayloadCodec.cbor` uses the conformance for every value of the type
/// (actions in entries, and anything else it encodes); `PayloadCodec.json`
/// still uses `Codable`. The conformance must write **the same bytes** the
/// type's `Codable` conformance produces through ``CBOREncoder``, so that
/// entries written either way read back either way, `logtool` shows them
/// alike, and adding or removing the conformance needs no migration. Its
/// `init(from:)` reads that form and throws on anything else: Chronicle then
/// decodes the payload through `Codable` instead, so entries written by other
/// tools (keys in another order, indefinite lengths) still decode, and a
/// payload that does not decode at all reports `Codable`'s error.
///
/// `Codable` writes an enum case as a one-pair map from the case name to a map
/// of its associated values, labelled by name or `_0`, `_1`, … (an empty map
/// for a case without values); a struct as a map of its stored properties in
/// declaration order:
///
/// ```swift
/// enum Action: Codable, Sendable, CBORCodable {
///   case deposit(String, cents: Int)
///   case close
///
///   func encode(to writer: inout CBORWriter) {
///     writer.encodeMapHeader(count: 1)
///     switch self {
///     case .deposit(let account, let cents):
///       writer.encode("deposit")
///       writer.encodeMapHeader(count: 2)
///       writer.encode("_0"); writer.encode(account)
///       writer.encode("cents"); writer.encode(cents)
///     case .close:
///       writer.encode("close")
///       writer.encodeMapHeader(count: 0)
///     }
///   }
///
///   init(from reader: inout CBORReader) throws {
///     try reader.expectMap(count: 1)
///     switch try reader.decode(String.self) {
///     case "deposit":
///       try reader.expectMap(count: 2)
///       try reader.expectKey("_0"); let account = try reader.decode(String.self)
///       try reader.expectKey("cents"); let cents = try reader.decode(Int.self)
///       self = .deposit(account, cents: cents)
///     case "close":
///       try reader.expectMap(count: 0)
///       self = .close
///     case let other:
///       throw reader.error("unknown case \(other)")
///     }
///   }
/// }
/// ```
///
/// Check a conformance against `Codable` in a test with `ChronicleTesting`'s
/// `expectCBORCodingMatchesCodable(_:)`.
public protocol CBORCodable: Codable {
  /// Writes the value: the same bytes its `Encodable` conformance produces through ``CBOREncoder``.
  func encode(to writer: inout CBORWriter)

  /// Reads a value as ``encode(to:)`` writes it; throws on anything else.
  init(from reader: inout CBORReader) throws
}

extension CBORCodable {
  /// The value's CBOR, written by ``encode(to:)``.
  @inlinable
  public var cborBytes: [UInt8] {
    var writer = CBORWriter()
    encode(to: &writer)
    return writer.bytes
  }

  /// The value in `bytes` read by ``init(from:)``, or `nil` if it throws or leaves bytes unread.
  @inlinable
  public init?(cborBytes bytes: UnsafeRawBufferPointer) {
    var reader = CBORReader(bytes)
    guard let value = try? Self(from: &reader), reader.isAtEnd else { return nil }
    self = value
  }
}
