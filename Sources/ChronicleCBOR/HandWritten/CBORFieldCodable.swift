import Foundation

// MARK: - Values written directly

/// A value that ``CBORWriter`` writes and ``CBORReader`` reads directly, in the bytes its
/// `Codable` conformance produces through ``CBOREncoder``: the scalars, strings, arrays of
/// such values, and the types whose conformance the `@CBORCodable` macro (product
/// `ChronicleMacros`) generates.
///
/// The code the macro generates calls `CBORWriter.encodeField(_:_:)` and
/// ``CBORReader/decodeField(_:_:)``; those pick this protocol's direct path where the
/// value conforms and go through `Codable` (``CBOREncoder``, ``CBORDecoder``) where it does not.
public protocol CBORFieldCodable: Codable {
  /// Writes the value as its `Encodable` conformance does through ``CBOREncoder``.
  func encode(to writer: inout CBORWriter)

  /// Reads a value as ``encode(to:)`` writes it; throws on anything else.
  init(from reader: inout CBORReader) throws
}

extension String: CBORFieldCodable {
  /// Writes the string as a text string.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(self) }
  /// Reads a text string.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decode(String.self) }
}

extension Bool: CBORFieldCodable {
  /// Writes `true` or `false`.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(self) }
  /// Reads `true` or `false`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decode(Bool.self) }
}

extension Double: CBORFieldCodable {
  /// Writes a float64, as `Codable` does.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(self) }
  /// Reads a float64 or float32.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decode(Double.self) }
}

extension Float: CBORFieldCodable {
  /// Writes a float32, as `Codable` does.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(self) }
  /// Reads a float32 (or a float64 that a `Float` holds exactly).
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decode(Float.self) }
}

extension Int: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(self) }
  /// Reads an integer that fits an `Int`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decode(Int.self) }
}

extension Int64: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(self) }
  /// Reads an integer that fits an `Int64`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decode(Int64.self) }
}

extension UInt64: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(self) }
  /// Reads a non-negative integer.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decode(UInt64.self) }
}

extension Int32: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(Int64(self)) }
  /// Reads an integer that fits an `Int32`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decodeInteger(Int32.self) }
}

extension Int16: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(Int64(self)) }
  /// Reads an integer that fits an `Int16`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decodeInteger(Int16.self) }
}

extension Int8: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(Int64(self)) }
  /// Reads an integer that fits an `Int8`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decodeInteger(Int8.self) }
}

extension UInt: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(UInt64(self)) }
  /// Reads a non-negative integer that fits a `UInt`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decodeInteger(UInt.self) }
}

extension UInt32: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(UInt64(self)) }
  /// Reads a non-negative integer that fits a `UInt32`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decodeInteger(UInt32.self) }
}

extension UInt16: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(UInt64(self)) }
  /// Reads a non-negative integer that fits a `UInt16`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decodeInteger(UInt16.self) }
}

extension UInt8: CBORFieldCodable {
  /// Writes the integer in its shortest form.
  @inlinable public func encode(to writer: inout CBORWriter) { writer.encode(UInt64(self)) }
  /// Reads a non-negative integer that fits a `UInt8`.
  @inlinable public init(from reader: inout CBORReader) throws { self = try reader.decodeInteger(UInt8.self) }
}

extension Array: CBORFieldCodable where Element: CBORFieldCodable {
  /// Writes a definite-length array of the elements, as `Codable`'s unkeyed container does.
  @inlinable
  public func encode(to writer: inout CBORWriter) {
    writer.encodeArrayHeader(count: count)
    for element in self { element.encode(to: &writer) }
  }

  /// Reads a definite-length array of elements.
  @inlinable
  public init(from reader: inout CBORReader) throws {
    let count = try reader.decodeArrayHeader()
    var elements: [Element] = []
    elements.reserveCapacity(count)
    for _ in 0..<count { elements.append(try Element(from: &reader)) }
    self = elements
  }
}

extension Dictionary: CBORFieldCodable where Key == String, Value: CBORFieldCodable {
  /// Writes a definite-length map of the pairs in the dictionary's order, as `Codable`'s keyed
  /// container does for a `String`-keyed dictionary.
  @inlinable
  public func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: count)
    for (key, value) in self {
      writer.encode(key)
      value.encode(to: &writer)
    }
  }

  /// Reads a definite-length map of text keys. Throws on a key that comes twice, so that the value
  /// is read through `Codable` instead, whose rules decide then.
  @inlinable
  public init(from reader: inout CBORReader) throws {
    let count = try reader.decodeMapHeader()
    var pairs: [String: Value] = [:]
    pairs.reserveCapacity(count)
    for _ in 0..<count {
      let key = try reader.decode(String.self)
      guard pairs.updateValue(try Value(from: &reader), forKey: key) == nil else {
        throw reader.error("the key \"\(key)\" comes twice in a map")
      }
    }
    self = pairs
  }
}

// MARK: - Fields, for generated conformances

/// `Optional`, as ``CBORReader/decodeField(_:_:)`` reads it: left out or `null` is `nil`.
public protocol CBOROptionalField {
  /// Reads the field `key` if it is the next one, else returns `nil`.
  static func decodeField(_ key: String, _ remaining: inout Int, from reader: inout CBORReader) throws -> Self
}

extension Optional: CBOROptionalField where Wrapped: Decodable {
  /// `nil` when the next key is not `key` or its value is `null`, else the wrapped value.
  @inlinable
  public static func decodeField(_ key: String, _ remaining: inout Int, from reader: inout CBORReader) throws -> Self {
    guard reader.nextField(is: key, &remaining), !reader.decodeNil() else { return nil }
    return .some(try reader.decodeValue(Wrapped.self))
  }
}

extension CBORWriter {
  /// The number of map pairs a field adds: 1 (a non-optional value is always written).
  @inlinable
  public static func pairs<T>(_: T) -> Int { 1 }

  /// The number of map pairs an optional field adds: 0 for `nil`, which `Codable` leaves out.
  @inlinable
  public static func pairs<T>(_ value: T?) -> Int { value == nil ? 0 : 1 }

  /// Writes the key and a value that is written directly.
  @inlinable
  public mutating func encodeField<T: CBORFieldCodable>(_ key: String, _ value: T) {
    encode(key)
    value.encode(to: &self)
  }

  /// Writes the key and an optional value written directly; writes nothing for `nil`, as
  /// `Codable`'s `encodeIfPresent` does.
  @inlinable
  public mutating func encodeField<T: CBORFieldCodable>(_ key: String, _ value: T?) {
    guard let value else { return }
    encode(key)
    value.encode(to: &self)
  }

  /// Writes the key and any `Encodable` value as `PayloadCodec.cbor` does (through its
  /// ``CBORCodable`` conformance if it has one). If that encoding throws, the writer keeps the
  /// error in ``failure`` and its bytes are not to be used.
  @inlinable
  public mutating func encodeField<T: Encodable>(_ key: String, _ value: T) {
    encode(key)
    encodeValue(value)
  }

  /// Writes the key and an optional `Encodable` value; writes nothing for `nil`, as
  /// `Codable`'s `encodeIfPresent` does.
  @inlinable
  public mutating func encodeField<T: Encodable>(_ key: String, _ value: T?) {
    guard let value else { return }
    encode(key)
    encodeValue(value)
  }

  /// Writes any `Encodable` value as `PayloadCodec.cbor` does, keeping a thrown error in ``failure``.
  @usableFromInline
  mutating func encodeValue<T: Encodable>(_ value: T) {
    do {
      try encode(value)
    } catch {
      if failure == nil { failure = error }
    }
  }
}

extension CBORReader {
  /// Reads the key of the next pair of a map with `remaining` pairs left, then its value: directly
  /// if `T` is ``CBORFieldCodable``, else as `PayloadCodec.cbor` does. An optional `T` is `nil`
  /// when the next key is not `key` (`Codable` leaves out `nil`) or its value is `null`.
  ///
  /// One function that tells the cases apart by `T`, rather than overloads that differ only in
  /// what they return, which Swift cannot rank. The direct case is asked first: specialization
  /// folds a cast that succeeds (the conformance is known when the code is compiled), never one
  /// that fails (another module could add the conformance), which then costs a lookup in the
  /// runtime's conformance cache on every call.
  @inlinable
  public mutating func decodeField<T: Decodable>(_ key: String, _ remaining: inout Int) throws -> T {
    if let direct = T.self as? any CBORFieldCodable.Type {
      try expectField(key, &remaining)
      return try decodeDirect(direct, as: T.self)
    }
    if let optional = T.self as? any CBOROptionalField.Type {
      return try decodeOptional(optional, key, &remaining, as: T.self)
    }
    try expectField(key, &remaining)
    return try decode(T.self)
  }

  /// A value read directly if `T` is ``CBORFieldCodable``, else as `PayloadCodec.cbor` does.
  @inlinable
  public mutating func decodeValue<T: Decodable>(_: T.Type) throws -> T {
    if let direct = T.self as? any CBORFieldCodable.Type { return try decodeDirect(direct, as: T.self) }
    return try decode(T.self)
  }

  /// A `C`, which is `T`. Generic over both so that, specialized, the conversion disappears.
  @inlinable
  mutating func decodeDirect<C: CBORFieldCodable, T>(_: C.Type, as _: T.Type) throws -> T {
    try C(from: &self) as! T
  }

  /// An optional field `O`, which is `T`. Generic over both so that, specialized, the conversion disappears.
  @inlinable
  mutating func decodeOptional<O: CBOROptionalField, T>(
    _: O.Type, _ key: String, _ remaining: inout Int, as _: T.Type
  ) throws -> T {
    try O.decodeField(key, &remaining, from: &self) as! T
  }

  /// Reads the key of the next pair of a map with `remaining` pairs left, which must be `key`.
  @inlinable
  public mutating func expectField(_ key: String, _ remaining: inout Int) throws {
    guard remaining > 0 else { throw error("expected the key \"\(key)\", found the end of the map") }
    try expectKey(key)
    remaining -= 1
  }

  /// Checks that a map read pair by pair has no pair left.
  public func expectEnd(ofMap remaining: Int) throws {
    guard remaining == 0 else { throw error("\(remaining) unexpected pairs left in the map") }
  }
}
