import Foundation

/// Conversions from `CBORValue` to Swift values, throwing `DecodingError`.
///
/// `path` closures build the coding path only when an error is thrown or a
/// nested decoder is needed, so the success path does not allocate.
enum CBORUnbox {
  static func failure(_ type: Any.Type, _ value: CBORValue, _ path: [any CodingKey]) -> DecodingError {
    if value.isNullLike {
      return .valueNotFound(
        type, .init(codingPath: path, debugDescription: "Expected \(type) value but found null instead."))
    }
    return .typeMismatch(
      type,
      .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(value.kindDescription) instead."))
  }

  static func corrupted(_ path: [any CodingKey], _ message: String) -> DecodingError {
    .dataCorrupted(.init(codingPath: path, debugDescription: message))
  }

  static func bool(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> Bool {
    if case .bool(let b) = value { return b }
    throw failure(Bool.self, value, path().keys)
  }

  static func string(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> String {
    if case .text(let s) = value { return s }
    throw failure(String.self, value, path().keys)
  }

  static func integer<I: FixedWidthInteger>(
    _ type: I.Type, _ value: CBORValue, _ path: () -> CBORCodingPath
  ) throws -> I {
    switch value {
    case .unsigned(let n):
      if let v = I(exactly: n) { return v }
      throw corrupted(path().keys, "Number \(n) does not fit in \(I.self).")
    case .negative(let n):
      if n <= UInt64(Int64.max), let v = I(exactly: -1 - Int64(n)) { return v }
      throw corrupted(path().keys, "Number \(CBORValue.negativeDecimal(n)) does not fit in \(I.self).")
    case .float16(let f), .float32(let f):
      if let v = I(exactly: f) { return v }
      throw corrupted(path().keys, "Number \(f) is not representable as \(I.self).")
    case .float64(let d):
      if let v = I(exactly: d) { return v }
      throw corrupted(path().keys, "Number \(d) is not representable as \(I.self).")
    default:
      throw failure(I.self, value, path().keys)
    }
  }

  static func double(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> Double {
    switch value {
    case .float64(let d): return d
    case .float32(let f), .float16(let f): return Double(f)
    case .unsigned(let n):
      if let d = Double(exactly: n) { return d }
      throw corrupted(path().keys, "Number \(n) is not exactly representable as Double.")
    case .negative(let n):
      if n == .max { return -0x1p64 }
      if let d = Double(exactly: n + 1) { return -d }
      throw corrupted(
        path().keys, "Number \(CBORValue.negativeDecimal(n)) is not exactly representable as Double.")
    default:
      throw failure(Double.self, value, path().keys)
    }
  }

  static func float(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> Float {
    switch value {
    case .float32(let f), .float16(let f): return f
    case .float64(let d):
      if d.isNaN { return Float(d) }
      if let f = Float(exactly: d) { return f }
      throw corrupted(path().keys, "Number \(d) is not exactly representable as Float.")
    case .unsigned(let n):
      if let f = Float(exactly: n) { return f }
      throw corrupted(path().keys, "Number \(n) is not exactly representable as Float.")
    case .negative(let n):
      if n == .max { return -0x1p64 }
      if let f = Float(exactly: n + 1) { return -f }
      throw corrupted(
        path().keys, "Number \(CBORValue.negativeDecimal(n)) is not exactly representable as Float.")
    default:
      throw failure(Float.self, value, path().keys)
    }
  }

  static func data(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> Data {
    if case .bytes(let b) = value { return Data(b) }
    throw failure(Data.self, value, path().keys)
  }

  static func date(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> Date {
    if let date = CBORDateDecoding.date(from: value) { return date }
    switch value {
    case .tagged(1, _), .tagged(1001, _):
      throw corrupted(path().keys, "Unsupported content for date tag: \(value.kindDescription).")
    default:
      throw failure(Date.self, value, path().keys)
    }
  }

  static func uuid(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> UUID {
    var content = value
    if case .tagged(37, let inner) = value { content = inner }
    switch content {
    case .bytes(let b):
      if b.count == 16 {
        return UUID(uuid: b.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) })
      }
      throw corrupted(path().keys, "A UUID needs 16 bytes, found \(b.count).")
    case .text(let s):
      if let uuid = UUID(uuidString: s) { return uuid }
      throw corrupted(path().keys, "Invalid UUID string.")
    default:
      throw failure(UUID.self, value, path().keys)
    }
  }

  static func url(_ value: CBORValue, _ path: () -> CBORCodingPath) throws -> URL {
    var content = value
    if case .tagged(32, let inner) = value { content = inner }
    guard case .text(let s) = content else {
      throw failure(URL.self, value, path().keys)
    }
    if let url = URL(string: s) { return url }
    throw corrupted(path().keys, "Invalid URL string.")
  }

  /// Decodes any `Decodable`, using direct conversions where a type has one.
  @inline(__always)
  static func decode<T: Decodable>(
    _ type: T.Type, from value: CBORValue, impl: CBORDecoderImpl, _ path: () -> CBORCodingPath
  ) throws -> T {
    if let known = try known(type, from: value, path) { return known as! T }
    return try impl.decodeComplex(type, from: value, at: path())
  }

  /// The value of a type with a direct conversion (primitives, `Data`, `Date`,
  /// `UUID`, `URL`), or `nil` for other types; `value` is read only for those.
  ///
  /// The result is `Any?`, not `T?`: in unspecialized code an optional of a
  /// generic type costs a metadata lookup on every call.
  @inline(__always)
  static func known(
    _ type: Any.Type, from value: @autoclosure () -> CBORValue, _ path: () -> CBORCodingPath
  ) throws -> Any? {
    if type == String.self { return try string(value(), path) }
    if type == Int.self { return try integer(Int.self, value(), path) }
    if type == Double.self { return try double(value(), path) }
    if type == Bool.self { return try bool(value(), path) }
    if type == Int64.self { return try integer(Int64.self, value(), path) }
    if type == UInt64.self { return try integer(UInt64.self, value(), path) }
    if type == Float.self { return try float(value(), path) }
    if type == UInt.self { return try integer(UInt.self, value(), path) }
    if type == Int32.self { return try integer(Int32.self, value(), path) }
    if type == UInt32.self { return try integer(UInt32.self, value(), path) }
    if type == Int16.self { return try integer(Int16.self, value(), path) }
    if type == UInt16.self { return try integer(UInt16.self, value(), path) }
    if type == Int8.self { return try integer(Int8.self, value(), path) }
    if type == UInt8.self { return try integer(UInt8.self, value(), path) }
    if type == Data.self { return try data(value(), path) }
    if type == Date.self { return try date(value(), path) }
    if type == UUID.self { return try uuid(value(), path) }
    if type == URL.self { return try url(value(), path) }
    return nil
  }
}
