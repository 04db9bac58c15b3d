import Foundation

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
