import Foundation

/// How a payload (an action or a state) is encoded. Stored as one byte per entry and snapshot.
///
/// ```swift
/// let bytes = try PayloadCodec.cbor.encode(Counter.Action.set(5))
/// let action = try PayloadCodec.cbor.decode(Counter.Action.self, from: bytes)
/// print(try PayloadCodec.cbor.renderJSON(bytes))   // {"set":{"_0":5}}
/// ```
public enum PayloadCodec: UInt8, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
  /// UTF-8 JSON from `JSONEncoder` with sorted keys: readable with any text tool.
  case json = 1
  /// CBOR (RFC 8949) from ``/ChronicleCBOR/CBOREncoder``: compact, self-describing, read by standard tools.
  case cbor = 2

  /// `"json"` or `"cbor"`.
  public var description: String {
    switch self {
    case .json: "json"
    case .cbor: "cbor"
    }
  }

  /// Parses `"json"` or `"cbor"`.
  public init?(name: String) {
    guard let codec = Self.allCases.first(where: { $0.description == name }) else { return nil }
    self = codec
  }

  /// Encodes `value`: for ``cbor``, through its ``/ChronicleCBOR/CBORCodable`` conformance if it has one.
  @inlinable
  public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    if self == .cbor, let fast = T.self as? any CBORCodable.Type, let bytes = Self.write(value, as: fast) {
      return bytes
    }
    return try encodeThroughCodable(value)
  }

  /// The CBOR of `value`, a `C`, or `nil` if a nested value's `Encodable` conformance threw.
  /// Generic over both so that, specialized, the conversion disappears.
  @inlinable
  static func write<T, C: CBORCodable>(_ value: T, as _: C.Type) -> [UInt8]? {
    var writer = CBORWriter()
    (value as! C).encode(to: &writer)
    // A nested value's `Encodable` conformance threw: `Codable` below throws it.
    return writer.failure == nil ? writer.bytes : nil
  }

  /// Decodes a `T` from `bytes`: for ``cbor``, through its ``/ChronicleCBOR/CBORCodable``
  /// conformance if it has one and that reads the bytes, else through `Codable`.
  @inlinable
  public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
    if self == .cbor, let fast = T.self as? any CBORCodable.Type, let value = Self.read(fast, as: type, from: bytes) {
      return value
    }
    return try decodeThroughCodable(type, from: bytes)
  }

  /// A `C`, which is `T`, from `bytes`. Generic over both so that, specialized, the conversion disappears.
  @inlinable
  static func read<C: CBORCodable, T>(_: C.Type, as _: T.Type, from bytes: UnsafeRawBufferPointer) -> T? {
    C(cborBytes: bytes).map { $0 as! T }
  }

  @usableFromInline
  func encodeThroughCodable<T: Encodable>(_ value: T) throws -> [UInt8] {
    switch self {
    case .json: Array(try Self.jsonEncoder.encode(value))
    case .cbor: try CBOREncoder().encode(value)
    }
  }

  @usableFromInline
  func decodeThroughCodable<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
    switch self {
    case .json: try Self.jsonDecoder.decode(type, from: Data(bytes))
    case .cbor: try CBORDecoder().decode(type, from: bytes)
    }
  }

  /// Decodes a `T` from `bytes`.
  public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    try bytes.withUnsafeBytes { try decode(type, from: $0) }
  }

  /// Renders a payload as JSON text without knowing its Swift type.
  ///
  /// JSON payloads are re-formatted (and so validated); CBOR payloads are
  /// converted as ``/ChronicleCBOR/CBORValue/jsonText(prettyPrinted:)`` describes.
  public func renderJSON(_ bytes: [UInt8], prettyPrinted: Bool = false) throws -> String {
    switch self {
    case .json:
      let object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
      var options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]
      if prettyPrinted { options.insert(.prettyPrinted) }
      return String(decoding: try JSONSerialization.data(withJSONObject: object, options: options), as: UTF8.self)
    case .cbor:
      return try CBORValue(decoding: bytes).jsonText(prettyPrinted: prettyPrinted)
    }
  }

  // Foundation's JSON coders are Sendable and thread-safe once configured.
  private static let jsonEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
  }()
  private static let jsonDecoder = JSONDecoder()
}
