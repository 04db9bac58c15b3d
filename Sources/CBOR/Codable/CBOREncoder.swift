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

// MARK: - Coding keys and paths

/// A coding key used for array indices and the `"super"` key.
struct CBORKey: CodingKey {
  let stringValue: String
  let intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
    self.intValue = nil
  }

  init(intValue: Int) {
    self.stringValue = String(intValue)
    self.intValue = intValue
  }

  init(index: Int) {
    self.stringValue = "Index \(index)"
    self.intValue = index
  }

  static let `super` = CBORKey(stringValue: "super")
}

/// A persistent linked list of coding keys, so that descending one level costs
/// one small allocation instead of copying the whole path.
indirect enum CBORCodingPath {
  case root
  case node(CBORCodingPath, any CodingKey)

  func appending(_ key: some CodingKey) -> CBORCodingPath {
    .node(self, key)
  }

  /// The path as the array `Encoder`/`Decoder` expose.
  var keys: [any CodingKey] {
    var result: [any CodingKey] = []
    var current = self
    while case .node(let parent, let key) = current {
      result.append(key)
      current = parent
    }
    result.reverse()
    return result
  }
}

// MARK: - Special types

/// Direct conversions for primitives and the Foundation types with a fixed CBOR form.
enum CBORSpecialEncoding {
  /// Seconds between 1970-01-01 and 2001-01-01.
  static let epochDelta: Double = 978_307_200

  /// The CBOR form of `value` if its type has a built-in mapping, else `nil`.
  @inline(__always)
  static func value<T: Encodable>(of value: T) -> CBORValue? {
    if T.self == String.self { return .text(value as! String) }
    if T.self == Int.self { return .integer(Int64(value as! Int)) }
    if T.self == Double.self { return .float64(value as! Double) }
    if T.self == Bool.self { return .bool(value as! Bool) }
    if T.self == Int64.self { return .integer(value as! Int64) }
    if T.self == UInt64.self { return .unsigned(value as! UInt64) }
    if T.self == Float.self { return .float32(value as! Float) }
    if T.self == UInt.self { return .unsigned(UInt64(value as! UInt)) }
    if T.self == Int32.self { return .integer(Int64(value as! Int32)) }
    if T.self == UInt32.self { return .unsigned(UInt64(value as! UInt32)) }
    if T.self == Int16.self { return .integer(Int64(value as! Int16)) }
    if T.self == UInt16.self { return .unsigned(UInt64(value as! UInt16)) }
    if T.self == Int8.self { return .integer(Int64(value as! Int8)) }
    if T.self == UInt8.self { return .unsigned(UInt64(value as! UInt8)) }
    if T.self == Data.self { return .bytes([UInt8](value as! Data)) }
    if T.self == Date.self { return date(value as! Date) }
    if T.self == UUID.self { return uuid(value as! UUID) }
    if T.self == URL.self { return .tagged(32, .text((value as! URL).absoluteString)) }
    return nil
  }

  /// `UUID` → tag 37 wrapping its 16 bytes.
  static func uuid(_ uuid: UUID) -> CBORValue {
    .tagged(37, .bytes(withUnsafeBytes(of: uuid.uuid) { [UInt8]($0) }))
  }

  /// `Date` → tag 1 (float64 seconds since 1970), or tag 1001 `{5: [e, m]}`
  /// when the float64 would not convert back to the identical `Date`.
  static func date(_ date: Date) -> CBORValue {
    let t = date.timeIntervalSinceReferenceDate
    let seconds = t + epochDelta
    if !t.isFinite || seconds - epochDelta == t {
      return .tagged(1, .float64(seconds))
    }
    let (exponent, mantissa) = exactBigfloat(sinceReferenceDate: t)
    return .tagged(
      1001,
      .map([CBORMapEntry(key: .unsigned(5), value: .array([.integer(exponent), mantissa]))]))
  }

  /// `(e, m)` with `m × 2^e == t + epochDelta` exactly, for finite `t`.
  ///
  /// `m` is a CBOR integer when it fits, else a tag 2/3 bignum (needed only
  /// when `t` has bits below 2^-32 s or lies beyond ±2^63 s).
  static func exactBigfloat(sinceReferenceDate t: Double) -> (Int64, CBORValue) {
    let delta = UInt64(epochDelta)
    // |t| == magnitude × 2^scale with an odd magnitude below 2^53.
    let bits = t.bitPattern
    let biased = Int((bits >> 52) & 0x7ff)
    var magnitude = bits & 0x000f_ffff_ffff_ffff
    var scale: Int
    if biased == 0 {
      scale = -1074
    } else {
      magnitude |= 1 << 52
      scale = biased - 1075
    }
    let negative = t.sign == .minus
    if magnitude == 0 { return (0, .unsigned(delta)) }
    let zeros = magnitude.trailingZeroBitCount
    magnitude >>= UInt64(zeros)
    scale += zeros

    let signed = negative ? -Int64(magnitude) : Int64(magnitude)
    if scale < 0 {
      if scale >= -32 {
        return (Int64(scale), .integer(signed + Int64(delta << UInt64(-scale))))
      }
    } else if scale < 11 {
      let (sum, overflow) = (signed << Int64(scale)).addingReportingOverflow(Int64(delta))
      if !overflow { return (0, .integer(sum)) }
    }

    // m = ±magnitude × 2^(scale − e) + delta × 2^(−e), with e = min(scale, 0).
    let e = min(scale, 0)
    let a = CBORBigUInt(magnitude, shiftedLeftBy: scale - e)
    let b = CBORBigUInt(delta, shiftedLeftBy: -e)
    let mantissa: CBORValue
    if !negative {
      mantissa = CBORBigUInt.value(negative: false, magnitude: a + b)
    } else if b < a {
      mantissa = CBORBigUInt.value(negative: true, magnitude: a - b)
    } else {
      mantissa = CBORBigUInt.value(negative: false, magnitude: b - a)
    }
    return (Int64(e), mantissa)
  }
}

// MARK: - Big integers for exact dates

/// A minimal unsigned big integer (little-endian 64-bit limbs, no leading
/// zero limbs), just enough to write and read exact bigfloat dates.
struct CBORBigUInt: Comparable {
  private(set) var limbs: [UInt64]

  /// Largest bignum accepted when reading (1,280 bits; an exact `Date` needs at most ~1,110).
  static let maxBytes = 160

  init(_ value: UInt64, shiftedLeftBy shift: Int) {
    precondition(shift >= 0)
    limbs = Array(repeating: 0, count: shift / 64)
    let bitShift = UInt64(shift % 64)
    limbs.append(value << bitShift)
    if bitShift > 0 { limbs.append(value >> (64 - bitShift)) }
    normalize()
  }

  /// Reads big-endian magnitude bytes (tag 2/3 content); `nil` if longer than `maxBytes`.
  init?(bigEndian bytes: [UInt8]) {
    guard bytes.count <= Self.maxBytes else { return nil }
    limbs = []
    var limb: UInt64 = 0
    var shift: UInt64 = 0
    for byte in bytes.reversed() {
      limb |= UInt64(byte) << shift
      shift += 8
      if shift == 64 {
        limbs.append(limb)
        limb = 0
        shift = 0
      }
    }
    limbs.append(limb)
    normalize()
  }

  /// `self × 2^shift`.
  func shiftedLeft(by shift: Int) -> CBORBigUInt {
    var result = CBORBigUInt(0, shiftedLeftBy: 0)
    guard !isZero else { return result }
    result.limbs = Array(repeating: 0, count: shift / 64)
    let bitShift = UInt64(shift % 64)
    var carry: UInt64 = 0
    for limb in limbs {
      result.limbs.append((limb << bitShift) | carry)
      carry = bitShift > 0 ? limb >> (64 - bitShift) : 0
    }
    result.limbs.append(carry)
    result.normalize()
    return result
  }

  private mutating func normalize() {
    while let last = limbs.last, last == 0 { limbs.removeLast() }
  }

  var isZero: Bool { limbs.isEmpty }

  /// The value if it fits in a `UInt64`.
  var uint64: UInt64? {
    switch limbs.count {
    case 0: return 0
    case 1: return limbs[0]
    default: return nil
    }
  }

  /// Big-endian bytes without leading zeros.
  var bigEndianBytes: [UInt8] {
    var out: [UInt8] = []
    for limb in limbs.reversed() {
      for i in stride(from: 56, through: 0, by: -8) {
        let byte = UInt8(truncatingIfNeeded: limb >> UInt64(i))
        if out.isEmpty && byte == 0 { continue }
        out.append(byte)
      }
    }
    return out
  }

  /// The nearest `Double` (exact whenever the value has at most 53 significant bits).
  var doubleValue: Double {
    var result = 0.0
    for limb in limbs.reversed() {
      result = result * 0x1p64 + Double(limb)
    }
    return result
  }

  static func < (lhs: CBORBigUInt, rhs: CBORBigUInt) -> Bool {
    if lhs.limbs.count != rhs.limbs.count { return lhs.limbs.count < rhs.limbs.count }
    for i in lhs.limbs.indices.reversed() where lhs.limbs[i] != rhs.limbs[i] {
      return lhs.limbs[i] < rhs.limbs[i]
    }
    return false
  }

  static func + (lhs: CBORBigUInt, rhs: CBORBigUInt) -> CBORBigUInt {
    var result = lhs
    var carry: UInt64 = 0
    for i in 0..<max(lhs.limbs.count, rhs.limbs.count) {
      if i == result.limbs.count { result.limbs.append(0) }
      let (s1, o1) = result.limbs[i].addingReportingOverflow(i < rhs.limbs.count ? rhs.limbs[i] : 0)
      let (s2, o2) = s1.addingReportingOverflow(carry)
      result.limbs[i] = s2
      carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
    }
    if carry > 0 { result.limbs.append(carry) }
    return result
  }

  /// `lhs − rhs`; requires `rhs <= lhs`.
  static func - (lhs: CBORBigUInt, rhs: CBORBigUInt) -> CBORBigUInt {
    var result = lhs
    var borrow: UInt64 = 0
    for i in result.limbs.indices {
      let (d1, o1) = result.limbs[i].subtractingReportingOverflow(i < rhs.limbs.count ? rhs.limbs[i] : 0)
      let (d2, o2) = d1.subtractingReportingOverflow(borrow)
      result.limbs[i] = d2
      borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
    }
    result.normalize()
    return result
  }

  /// The CBOR integer `±magnitude`: major type 0/1 when it fits, else tag 2/3.
  static func value(negative: Bool, magnitude: CBORBigUInt) -> CBORValue {
    if !negative || magnitude.isZero {
      if let n = magnitude.uint64 { return .unsigned(n) }
      return .tagged(2, .bytes(magnitude.bigEndianBytes))
    }
    // A negative value −k is stored as k − 1.
    let stored = magnitude - CBORBigUInt(1, shiftedLeftBy: 0)
    if let n = stored.uint64 { return .negative(n) }
    return .tagged(3, .bytes(stored.bigEndianBytes))
  }

  /// Reads a CBOR integer or tag 2/3 bignum as sign and magnitude.
  static func signedMagnitude(of value: CBORValue) -> (negative: Bool, magnitude: CBORBigUInt)? {
    switch value {
    case .unsigned(let n):
      return (false, CBORBigUInt(n, shiftedLeftBy: 0))
    case .negative(let n):
      return (true, CBORBigUInt(n, shiftedLeftBy: 0) + CBORBigUInt(1, shiftedLeftBy: 0))
    case .tagged(2, .bytes(let b)):
      return CBORBigUInt(bigEndian: b).map { (false, $0) }
    case .tagged(3, .bytes(let b)):
      return CBORBigUInt(bigEndian: b).map { (true, $0 + CBORBigUInt(1, shiftedLeftBy: 0)) }
    default:
      return nil
    }
  }
}

// MARK: - Encoding tree

/// The intermediate tree: containers must stay mutable until encoding ends,
/// and definite-length headers need the final counts.
enum CBOREncodingNode {
  case value(CBORValue)
  case array(CBORArrayBox)
  case map(CBORMapBox)
  /// The result of a `superEncoder()`, read when the tree is serialized.
  case deferred(CBOREncoderImpl)

  func write(into out: inout [UInt8]) {
    switch self {
    case .value(let value):
      value.write(into: &out)
    case .array(let box):
      CBORHead.head(4, UInt64(box.items.count), into: &out)
      for item in box.items { item.write(into: &out) }
    case .map(let box):
      CBORHead.head(5, UInt64(box.keys.count), into: &out)
      for i in box.keys.indices {
        CBORHead.text(box.keys[i], into: &out)
        box.values[i].write(into: &out)
      }
    case .deferred(let encoder):
      if let result = encoder.result {
        result.write(into: &out)
      } else {
        out.append(0xa0)
      }
    }
  }
}

/// Mutable storage of an unkeyed container.
final class CBORArrayBox {
  var items: [CBOREncodingNode] = []
}

/// Mutable storage of a keyed container: ordered keys, with replacement on re-encode.
final class CBORMapBox {
  private(set) var keys: [String] = []
  private(set) var values: [CBOREncodingNode] = []
  private var index: [String: Int]?

  private static let linearLimit = 16

  func set(_ key: String, _ node: CBOREncodingNode) {
    if let i = position(of: key) {
      values[i] = node
      return
    }
    keys.append(key)
    values.append(node)
    if index != nil {
      index![key] = keys.count - 1
    } else if keys.count > Self.linearLimit {
      var built: [String: Int] = [:]
      built.reserveCapacity(keys.count * 2)
      for (i, k) in keys.enumerated() where built[k] == nil { built[k] = i }
      index = built
    }
  }

  private func position(of key: String) -> Int? {
    if let index { return index[key] }
    return keys.firstIndex(of: key)
  }
}

// MARK: - Encoder implementation

/// The `Encoder` handed to `encode(to:)`. One instance is reused for nested
/// values (its state is saved and restored around each one); only
/// `superEncoder()` creates a separate instance.
final class CBOREncoderImpl: Encoder {
  var path: CBORCodingPath
  var result: CBOREncodingNode?

  init(path: CBORCodingPath) {
    self.path = path
  }

  var codingPath: [any CodingKey] { path.keys }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// Encodes `value` (a type without a built-in mapping) at `path`.
  func encodeComplex<T: Encodable>(_ value: T, at path: CBORCodingPath) throws -> CBOREncodingNode {
    let savedPath = self.path
    let savedResult = self.result
    self.path = path
    self.result = nil
    defer {
      self.path = savedPath
      self.result = savedResult
    }
    try value.encode(to: self)
    return self.result ?? .map(CBORMapBox())
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let box: CBORMapBox
    if case .map(let existing)? = result {
      box = existing
    } else {
      box = CBORMapBox()
      result = .map(box)
    }
    return KeyedEncodingContainer(CBORKeyedEncodingContainer<Key>(impl: self, box: box, path: path))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let box: CBORArrayBox
    if case .array(let existing)? = result {
      box = existing
    } else {
      box = CBORArrayBox()
      result = .array(box)
    }
    return CBORUnkeyedEncodingContainer(impl: self, box: box, path: path)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    self
  }
}

extension CBOREncoderImpl: SingleValueEncodingContainer {
  func encodeNil() { result = .value(.null) }
  func encode(_ value: Bool) { result = .value(.bool(value)) }
  func encode(_ value: String) { result = .value(.text(value)) }
  func encode(_ value: Double) { result = .value(.float64(value)) }
  func encode(_ value: Float) { result = .value(.float32(value)) }
  func encode(_ value: Int) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int8) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int16) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int32) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int64) { result = .value(.integer(value)) }
  func encode(_ value: UInt) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt8) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt16) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt32) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt64) { result = .value(.unsigned(value)) }

  func encode<T: Encodable>(_ value: T) throws {
    if let special = CBORSpecialEncoding.value(of: value) {
      result = .value(special)
    } else {
      result = try encodeComplex(value, at: path)
    }
  }
}

// MARK: - Keyed container

struct CBORKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let impl: CBOREncoderImpl
  let box: CBORMapBox
  let path: CBORCodingPath

  var codingPath: [any CodingKey] { path.keys }

  mutating func encodeNil(forKey key: Key) { box.set(key.stringValue, .value(.null)) }
  mutating func encode(_ value: Bool, forKey key: Key) { box.set(key.stringValue, .value(.bool(value))) }
  mutating func encode(_ value: String, forKey key: Key) { box.set(key.stringValue, .value(.text(value))) }
  mutating func encode(_ value: Double, forKey key: Key) { box.set(key.stringValue, .value(.float64(value))) }
  mutating func encode(_ value: Float, forKey key: Key) { box.set(key.stringValue, .value(.float32(value))) }
  mutating func encode(_ value: Int, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int8, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int16, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int32, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int64, forKey key: Key) { box.set(key.stringValue, .value(.integer(value))) }
  mutating func encode(_ value: UInt, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt8, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt16, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt32, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt64, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(value))) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    if let special = CBORSpecialEncoding.value(of: value) {
      box.set(key.stringValue, .value(special))
    } else {
      box.set(key.stringValue, try impl.encodeComplex(value, at: path.appending(key)))
    }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = CBORMapBox()
    box.set(key.stringValue, .map(nested))
    return KeyedEncodingContainer(
      CBORKeyedEncodingContainer<NestedKey>(impl: impl, box: nested, path: path.appending(key)))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested = CBORArrayBox()
    box.set(key.stringValue, .array(nested))
    return CBORUnkeyedEncodingContainer(impl: impl, box: nested, path: path.appending(key))
  }

  mutating func superEncoder() -> any Encoder {
    let encoder = CBOREncoderImpl(path: path.appending(CBORKey.super))
    box.set(CBORKey.super.stringValue, .deferred(encoder))
    return encoder
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    let encoder = CBOREncoderImpl(path: path.appending(key))
    box.set(key.stringValue, .deferred(encoder))
    return encoder
  }
}

// MARK: - Unkeyed container

struct CBORUnkeyedEncodingContainer: UnkeyedEncodingContainer {
  let impl: CBOREncoderImpl
  let box: CBORArrayBox
  let path: CBORCodingPath

  var codingPath: [any CodingKey] { path.keys }
  var count: Int { box.items.count }

  mutating func encodeNil() { box.items.append(.value(.null)) }
  mutating func encode(_ value: Bool) { box.items.append(.value(.bool(value))) }
  mutating func encode(_ value: String) { box.items.append(.value(.text(value))) }
  mutating func encode(_ value: Double) { box.items.append(.value(.float64(value))) }
  mutating func encode(_ value: Float) { box.items.append(.value(.float32(value))) }
  mutating func encode(_ value: Int) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int8) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int16) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int32) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int64) { box.items.append(.value(.integer(value))) }
  mutating func encode(_ value: UInt) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt8) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt16) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt32) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt64) { box.items.append(.value(.unsigned(value))) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    if let special = CBORSpecialEncoding.value(of: value) {
      box.items.append(.value(special))
    } else {
      let node = try impl.encodeComplex(value, at: path.appending(CBORKey(index: box.items.count)))
      box.items.append(node)
    }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = CBORMapBox()
    let key = CBORKey(index: box.items.count)
    box.items.append(.map(nested))
    return KeyedEncodingContainer(
      CBORKeyedEncodingContainer<NestedKey>(impl: impl, box: nested, path: path.appending(key)))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let nested = CBORArrayBox()
    let key = CBORKey(index: box.items.count)
    box.items.append(.array(nested))
    return CBORUnkeyedEncodingContainer(impl: impl, box: nested, path: path.appending(key))
  }

  mutating func superEncoder() -> any Encoder {
    let encoder = CBOREncoderImpl(path: path.appending(CBORKey(index: box.items.count)))
    box.items.append(.deferred(encoder))
    return encoder
  }
}
