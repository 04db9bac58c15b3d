import Foundation

// MARK: - Value model

/// One CBOR (RFC 8949) data item.
///
/// The enum mirrors the CBOR data model closely enough that parsing followed by
/// `encoded()` reproduces the input whenever the input was already in the
/// deterministic form this library writes (definite lengths, shortest integer
/// arguments). Maps keep their entries in stored order and may contain
/// duplicate keys; nothing is sorted or merged.
///
/// Equality and hashing are structural. Floating-point payloads compare by
/// their bit pattern, so `.float64(.nan) == .float64(.nan)` and
/// `.float64(0.0) != .float64(-0.0)`: two values are equal exactly when they
/// describe the same data, which keeps `Hashable` lawful.
public enum CBORValue: Sendable, Hashable {
  /// Major type 0: an unsigned integer.
  case unsigned(UInt64)
  /// Major type 1: a negative integer whose value is `-1 - n`.
  case negative(UInt64)
  /// Major type 2: a byte string.
  case bytes([UInt8])
  /// Major type 3: a UTF-8 text string.
  case text(String)
  /// Major type 4: an array.
  case array([CBORValue])
  /// Major type 5: a map, with its entries in stored order.
  case map([CBORMapEntry])
  /// Major type 6: a tag number applied to a content item.
  indirect case tagged(UInt64, CBORValue)
  /// The simple values `false` and `true`.
  case bool(Bool)
  /// The simple value `null`.
  case null
  /// The simple value `undefined`.
  case undefined
  /// Any other simple value (0–19 and 32–255 are well-formed).
  ///
  /// Values 20–23 alias `false`, `true`, `null` and `undefined` and are
  /// written with those encodings. Values 24–31 have no well-formed encoding
  /// in RFC 8949; `encoded()` writes them as `undefined` (`0xf7`). The parser
  /// never produces either range.
  case simple(UInt8)
  /// A half-precision float (`0xf9`), holding the value of the half.
  ///
  /// A value that is not exactly representable as a half is rounded to the
  /// nearest half (ties to even) when serialized.
  case float16(Float)
  /// A single-precision float (`0xfa`).
  case float32(Float)
  /// A double-precision float (`0xfb`).
  case float64(Double)
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
  /// The entry's key; any CBOR value is allowed.
  public var key: CBORValue
  /// The entry's value.
  public var value: CBORValue

  /// Creates an entry from a key and a value.
  public init(key: CBORValue, value: CBORValue) {
    self.key = key
    self.value = value
  }
}

/// Malformed CBOR: what is wrong and at which byte offset of the input.
public struct CBORError: Error, CustomStringConvertible, Sendable, Equatable {
  /// Byte offset in the input at which the problem was detected.
  public var offset: Int
  /// Human-readable explanation, e.g. `"invalid UTF-8 in text string"`.
  public var reason: String

  /// Creates an error for `offset` with the given explanation.
  public init(offset: Int, reason: String) {
    self.offset = offset
    self.reason = reason
  }

  /// `"CBOR error at byte <offset>: <reason>"`.
  public var description: String {
    "CBOR error at byte \(offset): \(reason)"
  }
}

// MARK: - Equality and hashing

extension CBORValue {
  /// Structural equality; floats compare by bit pattern.
  public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
    switch (lhs, rhs) {
    case let (.unsigned(a), .unsigned(b)): return a == b
    case let (.negative(a), .negative(b)): return a == b
    case let (.bytes(a), .bytes(b)): return a == b
    case let (.text(a), .text(b)): return a == b
    case let (.array(a), .array(b)): return a == b
    case let (.map(a), .map(b)): return a == b
    case let (.tagged(ta, a), .tagged(tb, b)): return ta == tb && a == b
    case let (.bool(a), .bool(b)): return a == b
    case (.null, .null), (.undefined, .undefined): return true
    case let (.simple(a), .simple(b)): return a == b
    case let (.float16(a), .float16(b)): return a.bitPattern == b.bitPattern
    case let (.float32(a), .float32(b)): return a.bitPattern == b.bitPattern
    case let (.float64(a), .float64(b)): return a.bitPattern == b.bitPattern
    default: return false
    }
  }

  /// Hashes the value consistently with `==` (floats by bit pattern).
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .unsigned(let n): hasher.combine(0 as UInt8); hasher.combine(n)
    case .negative(let n): hasher.combine(1 as UInt8); hasher.combine(n)
    case .bytes(let b): hasher.combine(2 as UInt8); hasher.combine(b)
    case .text(let s): hasher.combine(3 as UInt8); hasher.combine(s)
    case .array(let a): hasher.combine(4 as UInt8); hasher.combine(a)
    case .map(let m): hasher.combine(5 as UInt8); hasher.combine(m)
    case .tagged(let t, let v): hasher.combine(6 as UInt8); hasher.combine(t); hasher.combine(v)
    case .bool(let b): hasher.combine(7 as UInt8); hasher.combine(b)
    case .null: hasher.combine(8 as UInt8)
    case .undefined: hasher.combine(9 as UInt8)
    case .simple(let n): hasher.combine(10 as UInt8); hasher.combine(n)
    case .float16(let f): hasher.combine(11 as UInt8); hasher.combine(f.bitPattern)
    case .float32(let f): hasher.combine(12 as UInt8); hasher.combine(f.bitPattern)
    case .float64(let d): hasher.combine(13 as UInt8); hasher.combine(d.bitPattern)
    }
  }
}

// MARK: - Public parse / serialize entry points

extension CBORValue {
  /// Parses exactly one data item that must span all of `bytes` (trailing bytes are an error).
  ///
  /// Both definite and indefinite lengths are accepted. Throws `CBORError`
  /// for malformed input: truncation, reserved additional-information values,
  /// invalid UTF-8, misplaced break codes, nesting deeper than 256 levels, or
  /// trailing bytes.
  public init(decoding bytes: some Collection<UInt8>) throws {
    if let parsed = try bytes.withContiguousStorageIfAvailable({ buffer in
      try CBORValue(decoding: UnsafeRawBufferPointer(buffer))
    }) {
      self = parsed
    } else {
      self = try Array(bytes).withUnsafeBytes { try CBORValue(decoding: $0) }
    }
  }

  /// Parses exactly one data item that must span all of `buffer` (trailing bytes are an error).
  ///
  /// See `init(decoding:)` for the accepted syntax and the errors thrown.
  public init(decoding buffer: UnsafeRawBufferPointer) throws {
    self = try CBORParser.parseDocument(buffer)
  }

  /// Deterministic, definite-length, shortest-integer-form serialization.
  ///
  /// Integers, lengths and tag numbers use the shortest argument encoding;
  /// strings, arrays and maps always have definite lengths; map entries are
  /// written in stored order (they are not sorted); floats keep the width of
  /// their case (`float16` → 3 bytes, `float32` → 5, `float64` → 9).
  public func encoded() -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(64)
    write(into: &out)
    return out
  }

  /// Appends the serialization of `self` to `out`.
  func write(into out: inout [UInt8]) {
    switch self {
    case .unsigned(let n):
      CBORHead.head(0, n, into: &out)
    case .negative(let n):
      CBORHead.head(1, n, into: &out)
    case .bytes(let b):
      CBORHead.head(2, UInt64(b.count), into: &out)
      out.append(contentsOf: b)
    case .text(let s):
      CBORHead.text(s, into: &out)
    case .array(let items):
      CBORHead.head(4, UInt64(items.count), into: &out)
      for item in items { item.write(into: &out) }
    case .map(let entries):
      CBORHead.head(5, UInt64(entries.count), into: &out)
      for entry in entries {
        entry.key.write(into: &out)
        entry.value.write(into: &out)
      }
    case .tagged(let tag, let content):
      CBORHead.head(6, tag, into: &out)
      content.write(into: &out)
    case .bool(let b):
      out.append(b ? 0xf5 : 0xf4)
    case .null:
      out.append(0xf6)
    case .undefined:
      out.append(0xf7)
    case .simple(let n):
      if n < 24 {
        out.append(0xe0 | n)
      } else if n < 32 {
        out.append(0xf7)
      } else {
        out.append(0xf8)
        out.append(n)
      }
    case .float16(let f):
      let h = CBORHalf.bits(from: f)
      out.append(0xf9)
      out.append(UInt8(truncatingIfNeeded: h >> 8))
      out.append(UInt8(truncatingIfNeeded: h))
    case .float32(let f):
      out.append(0xfa)
      CBORHead.bigEndian(UInt64(f.bitPattern), bytes: 4, into: &out)
    case .float64(let d):
      out.append(0xfb)
      CBORHead.bigEndian(d.bitPattern, bytes: 8, into: &out)
    }
  }
}

// MARK: - Writer helpers

/// Low-level serialization helpers shared by `CBORValue` and `CBOREncoder`.
enum CBORHead {
  /// Writes an initial byte for `major` with the shortest argument form of `argument`.
  @inline(__always)
  static func head(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
    let m = major << 5
    if argument < 24 {
      out.append(m | UInt8(truncatingIfNeeded: argument))
    } else if argument <= 0xff {
      out.append(m | 24)
      out.append(UInt8(truncatingIfNeeded: argument))
    } else if argument <= 0xffff {
      out.append(m | 25)
      bigEndian(argument, bytes: 2, into: &out)
    } else if argument <= 0xffff_ffff {
      out.append(m | 26)
      bigEndian(argument, bytes: 4, into: &out)
    } else {
      out.append(m | 27)
      bigEndian(argument, bytes: 8, into: &out)
    }
  }

  /// Appends the low `bytes` bytes of `value`, most significant first.
  @inline(__always)
  static func bigEndian(_ value: UInt64, bytes: Int, into out: inout [UInt8]) {
    var shift = (bytes - 1) * 8
    while shift >= 0 {
      out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
      shift -= 8
    }
  }

  /// Writes a definite-length text string.
  @inline(__always)
  static func text(_ s: String, into out: inout [UInt8]) {
    var s = s
    s.withUTF8 { utf8 in
      head(3, UInt64(utf8.count), into: &out)
      out.append(contentsOf: utf8)
    }
  }

  /// Writes a signed integer as major type 0 or 1.
  @inline(__always)
  static func int(_ v: Int64, into out: inout [UInt8]) {
    if v >= 0 {
      head(0, UInt64(v), into: &out)
    } else {
      head(1, ~UInt64(bitPattern: v), into: &out)
    }
  }
}

extension CBORValue {
  /// The CBOR integer for `v` (`.unsigned` or `.negative`).
  @inline(__always)
  static func integer(_ v: Int64) -> CBORValue {
    v >= 0 ? .unsigned(UInt64(v)) : .negative(~UInt64(bitPattern: v))
  }
}

// MARK: - Half-precision conversion

/// IEEE 754 binary16 conversions, written out by hand so they work on every
/// platform (`Float16` is unavailable on Intel macOS).
enum CBORHalf {
  /// The exact `Float` value of the half with bit pattern `h` (NaN payloads kept).
  static func float(from h: UInt16) -> Float {
    let sign: UInt32 = UInt32(h & 0x8000) << 16
    let exponent = UInt32((h >> 10) & 0x1f)
    let mantissa = UInt32(h & 0x3ff)
    if exponent == 0 {
      // Zero or subnormal: mantissa × 2^-24, exact in Float.
      let magnitude = Float(mantissa) * 0x1p-24
      return sign != 0 ? -magnitude : magnitude
    }
    if exponent == 0x1f {
      return Float(bitPattern: sign | 0x7f80_0000 | (mantissa << 13))
    }
    return Float(bitPattern: sign | ((exponent + 112) << 23) | (mantissa << 13))
  }

  /// The half nearest to `f` (round to nearest, ties to even); NaN stays NaN.
  static func bits(from f: Float) -> UInt16 {
    let bits = f.bitPattern
    let sign = UInt16(truncatingIfNeeded: (bits >> 16) & 0x8000)
    let exponent = Int((bits >> 23) & 0xff)
    let mantissa = bits & 0x7f_ffff
    if exponent == 0xff {
      if mantissa == 0 { return sign | 0x7c00 }
      let payload = UInt16(truncatingIfNeeded: mantissa >> 13)
      return sign | 0x7c00 | (payload == 0 ? 0x200 : payload)
    }
    let e = exponent - 112  // rebias from 127 to 15
    if e >= 31 { return sign | 0x7c00 }
    if e <= 0 {
      if e < -10 { return sign }
      let significand = mantissa | 0x80_0000
      let shift = UInt32(14 - e)
      var half = significand >> shift
      let remainder = significand & ((1 << shift) - 1)
      let halfway: UInt32 = 1 << (shift - 1)
      if remainder > halfway || (remainder == halfway && half & 1 == 1) { half += 1 }
      return sign | UInt16(truncatingIfNeeded: half)
    }
    var half = (UInt32(e) << 10) | (mantissa >> 13)
    let remainder = mantissa & 0x1fff
    if remainder > 0x1000 || (remainder == 0x1000 && half & 1 == 1) { half += 1 }
    return sign | UInt16(truncatingIfNeeded: half)
  }
}

// MARK: - Parser

/// A bounds-checked, non-recursive-allocation CBOR parser over raw memory.
///
/// Every length and count is compared with the bytes remaining before any
/// allocation, nesting is limited to `maxDepth`, and all arithmetic is done in
/// ways that cannot overflow, so arbitrary input can only produce a value or a
/// `CBORError`.
struct CBORParser {
  /// Maximum number of nested arrays, maps, tags and indefinite strings.
  static let maxDepth = 256

  /// Upper bound on the capacity reserved up front for an array or map.
  ///
  /// Declared counts are already bounded by the remaining input, but every
  /// open container along a 256-deep path could otherwise reserve storage for
  /// the whole rest of the input at once (quadratic memory for hostile
  /// input). Larger containers grow geometrically as items actually parse.
  static let maxReservation = 64

  private let base: UnsafeRawPointer
  private let end: Int
  private var pos: Int = 0

  private init(base: UnsafeRawPointer, count: Int) {
    self.base = base
    self.end = count
  }

  /// Parses one data item spanning the whole buffer.
  static func parseDocument(_ buffer: UnsafeRawBufferPointer) throws(CBORError) -> CBORValue {
    guard let base = buffer.baseAddress, buffer.count > 0 else {
      throw CBORError(offset: 0, reason: "truncated: empty input, expected a data item")
    }
    var parser = CBORParser(base: base, count: buffer.count)
    let value = try parser.parseItem(depth: 0)
    if parser.pos != parser.end {
      throw CBORError(
        offset: parser.pos,
        reason: "trailing bytes: \(parser.end - parser.pos) bytes after the data item")
    }
    return value
  }

  /// Parses the one data item that spans `range` of `buffer` (already validated).
  static func parse(_ buffer: UnsafeRawBufferPointer, item range: Range<Int>) throws(CBORError) -> CBORValue {
    try parseDocument(UnsafeRawBufferPointer(rebasing: buffer[range]))
  }

  /// Checks that `buffer` holds exactly one well-formed data item, as
  /// ``parseDocument(_:)`` would, without building it; throws the error that
  /// `parseDocument` throws.
  static func validate(_ buffer: UnsafeRawBufferPointer) throws(CBORError) {
    if let base = buffer.baseAddress, buffer.count > 0 {
      var parser = CBORParser(base: base, count: buffer.count)
      if (try? parser.skipItem(depth: 0)) != nil, parser.pos == parser.end { return }
    }
    _ = try parseDocument(buffer)
  }

  /// The offset just after the well-formed data item that starts at `offset` in `buffer`.
  static func end(of buffer: UnsafeRawBufferPointer, at offset: Int) throws(CBORError) -> Int {
    guard let base = buffer.baseAddress, offset < buffer.count else {
      throw CBORError(offset: offset, reason: "truncated: expected a data item")
    }
    var parser = CBORParser(base: base, count: buffer.count)
    parser.pos = offset
    try parser.skipItem(depth: 0)
    return parser.pos
  }

  /// Walks one data item as ``parseItem(depth:)`` does, checking the same rules, building nothing.
  private mutating func skipItem(depth: Int) throws(CBORError) {
    guard pos < end else { throw CBORError(offset: pos, reason: "truncated") }
    let start = pos
    let initial = byte(at: pos)
    pos += 1
    let major = initial >> 5
    let ai = initial & 0x1f
    if ai == 31 {
      guard major >= 2, major <= 5 else { throw CBORError(offset: start, reason: "indefinite length") }
      try checkDepth(depth, start: start)
      while true {
        guard pos < end else { throw CBORError(offset: pos, reason: "no break") }
        if byte(at: pos) == 0xff {
          pos += 1
          return
        }
        if major <= 3 {
          // A chunk: a definite string of the same type.
          guard byte(at: pos) >> 5 == major, byte(at: pos) & 0x1f != 31 else {
            throw CBORError(offset: pos, reason: "bad chunk")
          }
        }
        try skipItem(depth: depth + 1)
        if major == 5 {
          guard pos < end, byte(at: pos) != 0xff else { throw CBORError(offset: pos, reason: "key without value") }
          try skipItem(depth: depth + 1)
        }
      }
    }
    let n = try argument(ai, major: major, start: start)
    switch major {
    case 2, 3:
      let count = try stringLength(n, major: major, start: start)
      if major == 3, CBORUTF8.firstInvalidByte(UnsafeBufferPointer(start: (base + pos).assumingMemoryBound(to: UInt8.self), count: count)) != nil {
        throw CBORError(offset: pos, reason: "invalid UTF-8")
      }
      pos += count
    case 4, 5:
      try checkDepth(depth, start: start)
      guard n <= UInt64(remaining) else { throw CBORError(offset: start, reason: "truncated") }
      for _ in 0..<(major == 5 ? 2 * Int(n) : Int(n)) { try skipItem(depth: depth + 1) }
    case 6:
      try checkDepth(depth, start: start)
      try skipItem(depth: depth + 1)
    case 7:
      if ai == 24, n < 32 { throw CBORError(offset: start, reason: "invalid simple value") }
    default:
      break
    }
  }

  @inline(__always)
  private var remaining: Int { end - pos }

  @inline(__always)
  private func byte(at offset: Int) -> UInt8 {
    base.load(fromByteOffset: offset, as: UInt8.self)
  }

  private static func majorName(_ major: UInt8) -> String {
    switch major {
    case 0: return "unsigned integer"
    case 1: return "negative integer"
    case 2: return "byte string"
    case 3: return "text string"
    case 4: return "array"
    case 5: return "map"
    case 6: return "tag"
    default: return "simple value or float"
    }
  }

  /// Reads the argument that follows an initial byte with additional info `ai` (0–27).
  @inline(__always)
  private mutating func argument(_ ai: UInt8, major: UInt8, start: Int) throws(CBORError) -> UInt64 {
    if ai < 24 { return UInt64(ai) }
    let size: Int
    switch ai {
    case 24: size = 1
    case 25: size = 2
    case 26: size = 4
    case 27: size = 8
    default:
      throw CBORError(offset: start, reason: "reserved additional info \(ai)")
    }
    guard size <= remaining else {
      throw CBORError(
        offset: start,
        reason: "truncated: \(Self.majorName(major)) argument needs \(size) bytes, \(remaining) remain")
    }
    let value: UInt64
    switch size {
    case 1: value = UInt64(byte(at: pos))
    case 2: value = UInt64(UInt16(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt16.self)))
    case 4: value = UInt64(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt32.self)))
    default: value = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt64.self))
    }
    pos += size
    return value
  }

  @inline(__always)
  private func checkDepth(_ depth: Int, start: Int) throws(CBORError) {
    if depth >= Self.maxDepth {
      throw CBORError(offset: start, reason: "nesting deeper than \(Self.maxDepth)")
    }
  }

  /// Parses one data item; `depth` is the number of enclosing containers.
  private mutating func parseItem(depth: Int) throws(CBORError) -> CBORValue {
    guard pos < end else {
      throw CBORError(offset: pos, reason: "truncated: expected a data item, 0 bytes remain")
    }
    let start = pos
    let initial = byte(at: pos)
    pos += 1
    let major = initial >> 5
    let ai = initial & 0x1f

    switch major {
    case 0, 1:
      if ai == 31 {
        throw CBORError(offset: start, reason: "indefinite length not allowed for \(Self.majorName(major))")
      }
      let n = try argument(ai, major: major, start: start)
      return major == 0 ? .unsigned(n) : .negative(n)

    case 2, 3:
      if ai == 31 {
        try checkDepth(depth, start: start)
        return try parseIndefiniteString(major: major, start: start)
      }
      let n = try argument(ai, major: major, start: start)
      let count = try stringLength(n, major: major, start: start)
      let bytes = UnsafeRawBufferPointer(start: base + pos, count: count)
      if major == 2 {
        pos += count
        return .bytes([UInt8](bytes))
      }
      let text = try CBORUTF8.string(bytes, at: pos)
      pos += count
      return .text(text)

    case 4:
      try checkDepth(depth, start: start)
      if ai == 31 {
        var items: [CBORValue] = []
        while true {
          guard pos < end else {
            throw CBORError(offset: pos, reason: "truncated: indefinite-length array has no break")
          }
          if byte(at: pos) == 0xff { pos += 1; break }
          items.append(try parseItem(depth: depth + 1))
        }
        return .array(items)
      }
      let n = try argument(ai, major: major, start: start)
      guard n <= UInt64(remaining) else {
        throw CBORError(
          offset: start,
          reason: "truncated: array of \(n) items needs at least \(n) bytes, \(remaining) remain")
      }
      let count = Int(n)
      var items: [CBORValue] = []
      items.reserveCapacity(Swift.min(count, Self.maxReservation))
      for _ in 0..<count {
        items.append(try parseItem(depth: depth + 1))
      }
      return .array(items)

    case 5:
      try checkDepth(depth, start: start)
      if ai == 31 {
        var entries: [CBORMapEntry] = []
        while true {
          guard pos < end else {
            throw CBORError(offset: pos, reason: "truncated: indefinite-length map has no break")
          }
          if byte(at: pos) == 0xff { pos += 1; break }
          let key = try parseItem(depth: depth + 1)
          if pos < end && byte(at: pos) == 0xff {
            throw CBORError(offset: pos, reason: "break code after a map key that has no value")
          }
          let value = try parseItem(depth: depth + 1)
          entries.append(CBORMapEntry(key: key, value: value))
        }
        return .map(entries)
      }
      let n = try argument(ai, major: major, start: start)
      guard n <= UInt64(remaining / 2) else {
        throw CBORError(
          offset: start,
          reason: "truncated: map of \(n) pairs needs at least 2 bytes per pair, \(remaining) remain")
      }
      let count = Int(n)
      var entries: [CBORMapEntry] = []
      entries.reserveCapacity(Swift.min(count, Self.maxReservation))
      for _ in 0..<count {
        let key = try parseItem(depth: depth + 1)
        let value = try parseItem(depth: depth + 1)
        entries.append(CBORMapEntry(key: key, value: value))
      }
      return .map(entries)

    case 6:
      if ai == 31 {
        throw CBORError(offset: start, reason: "indefinite length not allowed for tag")
      }
      let tag = try argument(ai, major: major, start: start)
      try checkDepth(depth, start: start)
      return .tagged(tag, try parseItem(depth: depth + 1))

    default:
      return try parseSimple(ai, start: start)
    }
  }

  /// Validates a definite string length against the remaining input.
  @inline(__always)
  private func stringLength(_ n: UInt64, major: UInt8, start: Int) throws(CBORError) -> Int {
    guard n <= UInt64(remaining) else {
      throw CBORError(
        offset: start,
        reason: "truncated: \(Self.majorName(major)) of \(n) bytes needs \(n), \(remaining) remain")
    }
    return Int(n)
  }

  private mutating func parseIndefiniteString(major: UInt8, start: Int) throws(CBORError) -> CBORValue {
    var collected: [UInt8] = []
    let name = Self.majorName(major)
    while true {
      guard pos < end else {
        throw CBORError(offset: pos, reason: "truncated: indefinite-length \(name) has no break")
      }
      let chunkStart = pos
      let initial = byte(at: pos)
      if initial == 0xff { pos += 1; break }
      pos += 1
      let chunkMajor = initial >> 5
      let chunkAI = initial & 0x1f
      guard chunkMajor == major else {
        throw CBORError(
          offset: chunkStart,
          reason: "non-string chunk (\(Self.majorName(chunkMajor))) inside indefinite-length \(name)")
      }
      guard chunkAI != 31 else {
        throw CBORError(offset: chunkStart, reason: "nested indefinite-length chunk inside indefinite-length \(name)")
      }
      let n = try argument(chunkAI, major: major, start: chunkStart)
      let count = try stringLength(n, major: major, start: chunkStart)
      let chunk = UnsafeRawBufferPointer(start: base + pos, count: count)
      if major == 3, let bad = CBORUTF8.firstInvalidByte(chunk.assumingMemoryBound(to: UInt8.self)) {
        throw CBORError(offset: pos + bad, reason: "invalid UTF-8 in text string")
      }
      collected.append(contentsOf: chunk)
      pos += count
    }
    if major == 2 { return .bytes(collected) }
    return .text(String(decoding: collected, as: UTF8.self))
  }

  private mutating func parseSimple(_ ai: UInt8, start: Int) throws(CBORError) -> CBORValue {
    switch ai {
    case 0..<20:
      return .simple(ai)
    case 20: return .bool(false)
    case 21: return .bool(true)
    case 22: return .null
    case 23: return .undefined
    case 24:
      guard remaining >= 1 else {
        throw CBORError(offset: start, reason: "truncated: simple value needs 1 byte, 0 remain")
      }
      let n = byte(at: pos)
      guard n >= 32 else {
        throw CBORError(offset: start, reason: "invalid simple value \(n) in two-byte form")
      }
      pos += 1
      return .simple(n)
    case 25:
      guard remaining >= 2 else {
        throw CBORError(offset: start, reason: "truncated: half-precision float needs 2 bytes, \(remaining) remain")
      }
      let bits = UInt16(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt16.self))
      pos += 2
      return .float16(CBORHalf.float(from: bits))
    case 26:
      guard remaining >= 4 else {
        throw CBORError(offset: start, reason: "truncated: single-precision float needs 4 bytes, \(remaining) remain")
      }
      let bits = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt32.self))
      pos += 4
      return .float32(Float(bitPattern: bits))
    case 27:
      guard remaining >= 8 else {
        throw CBORError(offset: start, reason: "truncated: double-precision float needs 8 bytes, \(remaining) remain")
      }
      let bits = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt64.self))
      pos += 8
      return .float64(Double(bitPattern: bits))
    case 31:
      throw CBORError(offset: start, reason: "unexpected break code outside an indefinite-length item")
    default:
      throw CBORError(offset: start, reason: "reserved additional info \(ai)")
    }
  }
}

// MARK: - UTF-8 validation

/// Strict UTF-8 validation per RFC 3629 (no overlongs, surrogates or code
/// points above U+10FFFF), with an eight-bytes-at-a-time ASCII fast path.
enum CBORUTF8 {
  /// The text string whose UTF-8 is `bytes`, validated; `offset` locates the first byte for errors.
  @inline(__always)
  static func string(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(CBORError) -> String {
    let utf8 = bytes.assumingMemoryBound(to: UInt8.self)
    if let bad = firstInvalidByte(utf8) {
      throw CBORError(offset: offset + bad, reason: "invalid UTF-8 in text string")
    }
    return String(decoding: utf8, as: UTF8.self)
  }

  /// Index of the first byte of the first invalid sequence, or `nil` if `bytes` is valid UTF-8.
  static func firstInvalidByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    guard let p = bytes.baseAddress else { return nil }
    let n = bytes.count
    let raw = UnsafeRawPointer(p)
    var i = 0
    while i < n {
      if n - i >= 8 {
        let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        if word & 0x8080_8080_8080_8080 == 0 {
          i += 8
          continue
        }
      }
      let b0 = p[i]
      if b0 < 0x80 {
        i += 1
        continue
      }
      if b0 < 0xc2 { return i }
      if b0 < 0xe0 {
        guard n - i >= 2, p[i + 1] & 0xc0 == 0x80 else { return i }
        i += 2
        continue
      }
      if b0 < 0xf0 {
        guard n - i >= 3 else { return i }
        let b1 = p[i + 1]
        let b2 = p[i + 2]
        guard b1 & 0xc0 == 0x80, b2 & 0xc0 == 0x80 else { return i }
        if b0 == 0xe0 && b1 < 0xa0 { return i }  // overlong
        if b0 == 0xed && b1 >= 0xa0 { return i }  // surrogate
        i += 3
        continue
      }
      if b0 < 0xf5 {
        guard n - i >= 4 else { return i }
        let b1 = p[i + 1]
        guard b1 & 0xc0 == 0x80, p[i + 2] & 0xc0 == 0x80, p[i + 3] & 0xc0 == 0x80 else { return i }
        if b0 == 0xf0 && b1 < 0x90 { return i }  // overlong
        if b0 == 0xf4 && b1 >= 0x90 { return i }  // above U+10FFFF
        i += 4
        continue
      }
      return i
    }
    return nil
  }
}
