import Foundation

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
