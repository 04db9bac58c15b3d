import Foundation

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
