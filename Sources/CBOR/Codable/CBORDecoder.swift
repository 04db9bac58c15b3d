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

// MARK: - Value helpers

extension CBORValue {
  /// `true` for `null` and `undefined`.
  var isNullLike: Bool {
    switch self {
    case .null, .undefined: return true
    default: return false
    }
  }

  /// A short description of the value's kind for error messages.
  var kindDescription: String {
    switch self {
    case .unsigned: return "an unsigned integer"
    case .negative: return "a negative integer"
    case .bytes: return "a byte string"
    case .text: return "a text string"
    case .array: return "an array"
    case .map: return "a map"
    case .tagged(let tag, _): return "a value with tag \(tag)"
    case .bool: return "a boolean"
    case .null: return "null"
    case .undefined: return "undefined"
    case .simple(let n): return "simple value \(n)"
    case .float16: return "a half-precision float"
    case .float32: return "a single-precision float"
    case .float64: return "a double-precision float"
    }
  }

  /// Decimal text of the integer `-1 - n`, exact for every `n`.
  static func negativeDecimal(_ n: UInt64) -> String {
    n == .max ? "-18446744073709551616" : "-\(n + 1)"
  }
}

// MARK: - Unboxing

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

// MARK: - Dates

/// Reading the date forms `CBOREncoder` writes and other common producers use.
enum CBORDateDecoding {
  /// A number as seconds (integers rounded to the nearest `Double`).
  static func seconds(_ value: CBORValue) -> Double? {
    switch value {
    case .unsigned(let n): return Double(n)
    case .negative(let n): return -1 - Double(n)
    case .float16(let f), .float32(let f): return Double(f)
    case .float64(let d): return d
    default: return nil
    }
  }

  /// The date of `seconds` since 1970, computed as `Date(timeIntervalSince1970:)` does.
  static func date(since1970 seconds: Double) -> Date {
    Date(timeIntervalSinceReferenceDate: seconds - CBORSpecialEncoding.epochDelta)
  }

  /// Tag 1, an untagged number, or tag 1001 extended time.
  static func date(from value: CBORValue) -> Date? {
    switch value {
    case .tagged(1, let content):
      return seconds(content).map(date(since1970:))
    case .tagged(1001, .map(let entries)):
      return sinceReferenceDate(extended: entries).map(Date.init(timeIntervalSinceReferenceDate:))
    default:
      return seconds(value).map(date(since1970:))
    }
  }

  /// The `Int64` value of an integer item, if it has one.
  static func int64(_ value: CBORValue) -> Int64? {
    switch value {
    case .unsigned(let n): return Int64(exactly: n)
    case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
    default: return nil
    }
  }

  /// Seconds since 2001 from an RFC 9581 extended-time map (keys 1 or 5;
  /// negative, elective keys are ignored; other critical keys are unsupported).
  static func sinceReferenceDate(extended entries: [CBORMapEntry]) -> Double? {
    var result: Double?
    for entry in entries {
      switch entry.key {
      case .unsigned(1):
        guard result == nil, let s = seconds(entry.value) else { return nil }
        result = s - CBORSpecialEncoding.epochDelta
      case .unsigned(5):
        guard result == nil, case .array(let pair) = entry.value, pair.count == 2, let e = int64(pair[0]),
          let t = sinceReferenceDate(bigfloatExponent: e, mantissa: pair[1])
        else { return nil }
        result = t
      case .negative:
        continue
      default:
        return nil
      }
    }
    return result
  }

  /// `m × 2^e − epochDelta`, exact whenever the result is representable as a
  /// `Double` (always the case for what `CBOREncoder` writes). `m` may be a
  /// CBOR integer or a tag 2/3 bignum; `nil` for other mantissas or exponents
  /// beyond ±1100.
  static func sinceReferenceDate(bigfloatExponent e: Int64, mantissa: CBORValue) -> Double? {
    let delta = Int64(CBORSpecialEncoding.epochDelta)
    if let m = int64(mantissa) {
      if e >= 0 {
        if e < 63 {
          let (shifted, overflow) = m.multipliedReportingOverflow(by: Int64(1) << e)
          if !overflow {
            let (n, overflow2) = shifted.subtractingReportingOverflow(delta)
            if !overflow2 { return Double(n) }
          }
        }
      } else if e >= -62 {
        let (scaledDelta, overflow) = delta.multipliedReportingOverflow(by: Int64(1) << -e)
        if !overflow {
          let (n, overflow2) = m.subtractingReportingOverflow(scaledDelta)
          if !overflow2 { return Double(sign: .plus, exponent: Int(e), significand: Double(n)) }
        }
      }
    }
    guard e >= -1100, e <= 1100, let (negative, magnitude) = CBORBigUInt.signedMagnitude(of: mantissa) else {
      return nil
    }
    let scaledM = e > 0 ? magnitude.shiftedLeft(by: Int(e)) : magnitude
    let scaledDelta = CBORBigUInt(UInt64(delta), shiftedLeftBy: e < 0 ? Int(-e) : 0)
    let differenceIsNegative: Bool
    let difference: CBORBigUInt
    if negative {
      (differenceIsNegative, difference) = (true, scaledM + scaledDelta)
    } else if scaledM < scaledDelta {
      (differenceIsNegative, difference) = (true, scaledDelta - scaledM)
    } else {
      (differenceIsNegative, difference) = (false, scaledM - scaledDelta)
    }
    let magnitudeValue = Double(sign: .plus, exponent: e < 0 ? Int(e) : 0, significand: difference.doubleValue)
    return differenceIsNegative ? -magnitudeValue : magnitudeValue
  }
}

// MARK: - Decoder implementation

/// The `Decoder` handed to `init(from:)`. One instance is reused for nested
/// values (its state is saved and restored around each one); only
/// `superDecoder()` creates a separate instance.
final class CBORDecoderImpl: Decoder {
  var value: CBORValue
  var path: CBORCodingPath

  init(value: CBORValue, path: CBORCodingPath) {
    self.value = value
    self.path = path
  }

  var codingPath: [any CodingKey] { path.keys }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// Decodes a type without a direct conversion from `value` at `path`.
  func decodeComplex<T: Decodable>(_ type: T.Type, from value: CBORValue, at path: CBORCodingPath) throws -> T {
    let savedValue = self.value
    let savedPath = self.path
    self.value = value
    self.path = path
    defer {
      self.value = savedValue
      self.path = savedPath
    }
    return try T(from: self)
  }

  func keyedContainer<Key: CodingKey>(
    _ keyType: Key.Type, for value: CBORValue, at path: CBORCodingPath
  ) throws -> KeyedDecodingContainer<Key> {
    guard case .map(let entries) = value else {
      if value.isNullLike {
        throw DecodingError.valueNotFound(
          KeyedDecodingContainer<Key>.self,
          .init(codingPath: path.keys, debugDescription: "Cannot get keyed decoding container -- found null instead."))
      }
      throw CBORUnbox.failure([String: Any].self, value, path.keys)
    }
    return KeyedDecodingContainer(CBORKeyedDecodingContainer<Key>(impl: self, entries: entries, path: path))
  }

  func unkeyedContainer(for value: CBORValue, at path: CBORCodingPath) throws -> any UnkeyedDecodingContainer {
    guard case .array(let items) = value else {
      if value.isNullLike {
        throw DecodingError.valueNotFound(
          (any UnkeyedDecodingContainer).self,
          .init(codingPath: path.keys, debugDescription: "Cannot get unkeyed decoding container -- found null instead."))
      }
      throw CBORUnbox.failure([Any].self, value, path.keys)
    }
    return CBORUnkeyedDecodingContainer(impl: self, items: items, path: path)
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    try keyedContainer(type, for: value, at: path)
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try unkeyedContainer(for: value, at: path)
  }

  func singleValueContainer() -> any SingleValueDecodingContainer {
    self
  }
}

extension CBORDecoderImpl: SingleValueDecodingContainer {
  func decodeNil() -> Bool { value.isNullLike }
  func decode(_ type: Bool.Type) throws -> Bool { try CBORUnbox.bool(value) { path } }
  func decode(_ type: String.Type) throws -> String { try CBORUnbox.string(value) { path } }
  func decode(_ type: Double.Type) throws -> Double { try CBORUnbox.double(value) { path } }
  func decode(_ type: Float.Type) throws -> Float { try CBORUnbox.float(value) { path } }
  func decode(_ type: Int.Type) throws -> Int { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int8.Type) throws -> Int8 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int16.Type) throws -> Int16 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int32.Type) throws -> Int32 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int64.Type) throws -> Int64 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt.Type) throws -> UInt { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try CBORUnbox.integer(type, value) { path } }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let current = value
    let currentPath = path
    return try CBORUnbox.decode(type, from: current, impl: self) { currentPath }
  }
}

// MARK: - Keyed container

/// Finds map entries for coding keys. Small maps are scanned linearly; larger
/// ones (e.g. decoded dictionaries) get this hash index, built once per container.
final class CBORMapLookup {
  private let byText: [String: Int]
  private let byInt: [Int: Int]

  static let linearLimit = 16

  init(_ entries: [CBORMapEntry]) {
    var byText: [String: Int] = [:]
    var byInt: [Int: Int] = [:]
    byText.reserveCapacity(entries.count)
    for (i, entry) in entries.enumerated() {
      switch entry.key {
      case .text(let s):
        if byText[s] == nil { byText[s] = i }
      case .unsigned(let n):
        let text = String(n)
        if byText[text] == nil { byText[text] = i }
        if let v = Int(exactly: n), byInt[v] == nil { byInt[v] = i }
      case .negative(let n):
        let text = CBORValue.negativeDecimal(n)
        if byText[text] == nil { byText[text] = i }
        if n <= UInt64(Int.max), byInt[-1 - Int(n)] == nil { byInt[-1 - Int(n)] = i }
      default:
        continue
      }
    }
    self.byText = byText
    self.byInt = byInt
  }

  func index(of key: some CodingKey) -> Int? {
    let textMatch = byText[key.stringValue]
    guard let intValue = key.intValue, let intMatch = byInt[intValue] else { return textMatch }
    guard let textMatch else { return intMatch }
    return min(textMatch, intMatch)
  }

  /// Whether the integer map key `entryKey` designates the coding key with
  /// these string and integer values.
  static func integerKeyMatches(_ entryKey: CBORValue, _ name: String, _ intValue: Int?) -> Bool {
    switch entryKey {
    case .unsigned(let n):
      if let i = intValue, i >= 0, UInt64(i) == n { return true }
      return String(n) == name
    case .negative(let n):
      if let i = intValue, i < 0, UInt64(-1 - i) == n { return true }
      return CBORValue.negativeDecimal(n) == name
    default:
      return false
    }
  }

  /// The coding key a map key designates: text by its string value, integers
  /// by their integer value (or their decimal text when the key type has no such
  /// integer key); `nil` for other keys.
  static func codingKey<Key: CodingKey>(for entryKey: CBORValue) -> Key? {
    switch entryKey {
    case .text(let s):
      return Key(stringValue: s)
    case .unsigned(let n):
      if let i = Int(exactly: n), let key = Key(intValue: i) { return key }
      return Key(stringValue: String(n))
    case .negative(let n):
      if n <= UInt64(Int.max), let key = Key(intValue: -1 - Int(n)) { return key }
      return Key(stringValue: CBORValue.negativeDecimal(n))
    default:
      return nil
    }
  }

  /// Index of the first entry of `entries` that designates `key` (linear scan).
  static func linearIndex(of key: some CodingKey, in entries: [CBORMapEntry]) -> Int? {
    let name = key.stringValue
    let intValue = key.intValue
    for i in entries.indices {
      switch entries[i].key {
      case .text(let s):
        if s == name { return i }
      case .unsigned, .negative:
        if integerKeyMatches(entries[i].key, name, intValue) { return i }
      default:
        continue
      }
    }
    return nil
  }
}

struct CBORKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let impl: CBORDecoderImpl
  let entries: [CBORMapEntry]
  let path: CBORCodingPath
  private let lookup: CBORMapLookup?

  init(impl: CBORDecoderImpl, entries: [CBORMapEntry], path: CBORCodingPath) {
    self.impl = impl
    self.entries = entries
    self.path = path
    self.lookup = entries.count > CBORMapLookup.linearLimit ? CBORMapLookup(entries) : nil
  }

  var codingPath: [any CodingKey] { path.keys }

  var allKeys: [Key] {
    var keys: [Key] = []
    keys.reserveCapacity(entries.count)
    for entry in entries {
      if let key: Key = CBORMapLookup.codingKey(for: entry.key) { keys.append(key) }
    }
    return keys
  }

  private func index(of key: some CodingKey) -> Int? {
    if let lookup { return lookup.index(of: key) }
    return CBORMapLookup.linearIndex(of: key, in: entries)
  }

  func contains(_ key: Key) -> Bool {
    index(of: key) != nil
  }

  private func value(for key: Key) throws -> CBORValue {
    guard let i = index(of: key) else {
      throw DecodingError.keyNotFound(
        key,
        .init(codingPath: path.keys, debugDescription: "No value associated with key \"\(key.stringValue)\"."))
    }
    return entries[i].value
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    try value(for: key).isNullLike
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try CBORUnbox.bool(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try CBORUnbox.string(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try CBORUnbox.double(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    try CBORUnbox.float(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try CBORUnbox.decode(type, from: value(for: key), impl: impl) { path.appending(key) }
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let i = index(of: key) else { return nil }
    let found = entries[i].value
    if found.isNullLike { return nil }
    return try CBORUnbox.decode(type, from: found, impl: impl) { path.appending(key) }
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try impl.keyedContainer(type, for: value(for: key), at: path.appending(key))
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try impl.unkeyedContainer(for: value(for: key), at: path.appending(key))
  }

  func superDecoder() throws -> any Decoder {
    let found = index(of: CBORKey.super).map { entries[$0].value } ?? .null
    return CBORDecoderImpl(value: found, path: path.appending(CBORKey.super))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    let found = index(of: key).map { entries[$0].value } ?? .null
    return CBORDecoderImpl(value: found, path: path.appending(key))
  }
}

// MARK: - Unkeyed container

struct CBORUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let impl: CBORDecoderImpl
  let items: [CBORValue]
  let path: CBORCodingPath
  private(set) var currentIndex = 0

  init(impl: CBORDecoderImpl, items: [CBORValue], path: CBORCodingPath) {
    self.impl = impl
    self.items = items
    self.path = path
  }

  var codingPath: [any CodingKey] { path.keys }
  var count: Int? { items.count }
  var isAtEnd: Bool { currentIndex >= items.count }

  private func current(_ type: Any.Type) throws -> CBORValue {
    guard currentIndex < items.count else {
      throw DecodingError.valueNotFound(
        type,
        .init(
          codingPath: path.appending(CBORKey(index: currentIndex)).keys,
          debugDescription: "Unkeyed container is at end."))
    }
    return items[currentIndex]
  }

  private func elementPath() -> CBORCodingPath {
    path.appending(CBORKey(index: currentIndex))
  }

  private static func elementPath(_ path: CBORCodingPath, _ index: Int) -> CBORCodingPath {
    path.appending(CBORKey(index: index))
  }

  mutating func decodeNil() throws -> Bool {
    if try current(Any?.self).isNullLike {
      currentIndex += 1
      return true
    }
    return false
  }

  private mutating func next<V>(_ type: V.Type, _ unbox: (CBORValue, () -> CBORCodingPath) throws -> V) throws -> V {
    let item = try current(type)
    let path = self.path
    let index = currentIndex
    let result = try unbox(item) { Self.elementPath(path, index) }
    currentIndex += 1
    return result
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, CBORUnbox.bool) }
  mutating func decode(_ type: String.Type) throws -> String { try next(type, CBORUnbox.string) }
  mutating func decode(_ type: Double.Type) throws -> Double { try next(type, CBORUnbox.double) }
  mutating func decode(_ type: Float.Type) throws -> Float { try next(type, CBORUnbox.float) }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let impl = self.impl
    return try next(type) { try CBORUnbox.decode(type, from: $0, impl: impl, $1) }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let item = try current(KeyedDecodingContainer<NestedKey>.self)
    let container = try impl.keyedContainer(type, for: item, at: elementPath())
    currentIndex += 1
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let item = try current((any UnkeyedDecodingContainer).self)
    let container = try impl.unkeyedContainer(for: item, at: elementPath())
    currentIndex += 1
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    let item = try current((any Decoder).self)
    let decoder = CBORDecoderImpl(value: item, path: elementPath())
    currentIndex += 1
    return decoder
  }
}
