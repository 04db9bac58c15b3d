/// Coding that prefers a type's ``CBORCodable`` conformance and falls back to `Codable`
/// (``CBOREncoder``, ``CBORDecoder``): what ``CBORWriter`` and ``CBORReader`` do for nested values.
enum CBORCodableDispatch {
  /// The CBOR of `value`: through its ``CBORCodable`` conformance if it has one.
  static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
    if let fast = T.self as? any CBORCodable.Type, let bytes = write(value, as: fast) { return bytes }
    return try CBOREncoder().encode(value)
  }

  /// A `T` from `bytes`: through its ``CBORCodable`` conformance if it has one and that reads
  /// the bytes, else through `Codable`.
  static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
    if let fast = T.self as? any CBORCodable.Type, let value = read(fast, as: type, from: bytes) { return value }
    return try CBORDecoder().decode(type, from: bytes)
  }

  /// The CBOR of `value`, a `C`, or `nil` if a nested value's `Encodable` conformance threw
  /// (``CBORWriter/failure``). Generic over both so that, specialized, the conversion disappears.
  private static func write<T, C: CBORCodable>(_ value: T, as _: C.Type) -> [UInt8]? {
    var writer = CBORWriter()
    (value as! C).encode(to: &writer)
    return writer.failure == nil ? writer.bytes : nil
  }

  /// A `C`, which is `T`, from `bytes`. Generic over both so that, specialized, the conversion disappears.
  private static func read<C: CBORCodable, T>(_: C.Type, as _: T.Type, from bytes: UnsafeRawBufferPointer) -> T? {
    C(cborBytes: bytes).map { $0 as! T }
  }
}
