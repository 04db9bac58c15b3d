import Foundation

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
