import Foundation

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
