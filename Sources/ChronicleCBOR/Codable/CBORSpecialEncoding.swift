import Foundation

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
