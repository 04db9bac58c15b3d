import Foundation
import LMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - Text helpers shared with LogToolKit

/// Compact JSON text built by appending to a byte buffer, keys in the order written.
///
/// ```swift
/// var out = JSONWriter()
/// out.beginObject()
/// out.field("seq", UInt64(1))
/// out.key("payload")
/// out.raw(#"{"increment":{}}"#)
/// out.endObject()   // {"seq":1,"payload":{"increment":{}}}
/// ```
package struct JSONWriter {
  /// The text so far, UTF-8.
  package var bytes: [UInt8] = []
  private var needsComma = false

  /// An empty writer.
  package init() {}

  /// The text so far as a string.
  package var text: String { String(decoding: bytes, as: UTF8.self) }

  /// Starts an object.
  package mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
  }

  /// Ends an object.
  package mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  /// Starts an array.
  package mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma = false
  }

  /// Ends an array.
  package mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// Writes an object key; the next call writes its value.
  package mutating func key(_ name: String) {
    separate()
    appendQuoted(name)
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
  }

  /// Writes `"name":"value"`.
  package mutating func field(_ name: String, _ value: String) {
    key(name)
    string(value)
  }

  /// Writes `"name":value`.
  package mutating func field(_ name: String, _ value: Int) {
    key(name)
    int(value)
  }

  /// Writes `"name":value`.
  package mutating func field(_ name: String, _ value: UInt64) {
    key(name)
    uint(value)
  }

  /// Writes `"name":true` or `false`.
  package mutating func field(_ name: String, _ value: Bool) {
    key(name)
    bool(value)
  }

  /// Writes a string value.
  package mutating func string(_ value: String) {
    separate()
    appendQuoted(value)
    needsComma = true
  }

  /// Writes an integer value.
  package mutating func int(_ value: Int) { rawValue(String(value)) }
  /// Writes an unsigned integer value.
  package mutating func uint(_ value: UInt64) { rawValue(String(value)) }
  /// Writes a number with a fractional part (`null` if it is not finite).
  package mutating func double(_ value: Double) { rawValue(value.isFinite ? "\(value)" : "null") }
  /// Writes `true` or `false`.
  package mutating func bool(_ value: Bool) { rawValue(value ? "true" : "false") }
  /// Writes `null`.
  package mutating func null() { rawValue("null") }
  /// Writes already valid JSON text as a value.
  package mutating func raw(_ json: String) { rawValue(json) }

  /// Ends a line (for JSON Lines).
  package mutating func newline() {
    bytes.append(UInt8(ascii: "\n"))
    needsComma = false
  }

  private mutating func rawValue(_ text: String) {
    separate()
    bytes.append(contentsOf: text.utf8)
    needsComma = true
  }

  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }

  private mutating func appendQuoted(_ text: String) {
    JSONString.append(text, to: &bytes, shortEscapes: true)
  }
}

/// A payload as one line of JSON text, for people and tools.
package enum PayloadText {
  /// The payload as compact JSON: a JSON payload that is already valid, single-line JSON
  /// is returned as stored (fast, and exactly what the app wrote); anything else goes
  /// through ``PayloadCodec/renderJSON(_:prettyPrinted:)``.
  package static func compactJSON(_ bytes: [UInt8], codec: PayloadCodec) throws -> String {
    if codec == .json, !bytes.contains(0x0A), !bytes.contains(0x0D), JSONCheck.isValid(bytes),
      let text = String(validating: bytes, as: UTF8.self)
    {
      return text
    }
    return try codec.renderJSON(bytes)
  }
}

/// A strict RFC 8259 syntax check of a JSON text (one value, optional surrounding whitespace).
enum JSONCheck {
  /// Whether `bytes` is exactly one JSON value; nesting deeper than 512 counts as invalid.
  static func isValid(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { buffer in
      var index = 0
      skipWhitespace(buffer, &index)
      guard value(buffer, &index, depth: 0) else { return false }
      skipWhitespace(buffer, &index)
      return index == buffer.count
    }
  }

  private static func skipWhitespace(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
    while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0A || b[i] == 0x0D { i += 1 }
  }

  private static func value(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int) -> Bool {
    guard i < b.count, depth < 512 else { return false }
    switch b[i] {
    case UInt8(ascii: "{"):
      i += 1
      skipWhitespace(b, &i)
      if i < b.count, b[i] == UInt8(ascii: "}") {
        i += 1
        return true
      }
      while true {
        guard i < b.count, b[i] == UInt8(ascii: "\""), string(b, &i) else { return false }
        skipWhitespace(b, &i)
        guard i < b.count, b[i] == UInt8(ascii: ":") else { return false }
        i += 1
        skipWhitespace(b, &i)
        guard value(b, &i, depth: depth + 1) else { return false }
        skipWhitespace(b, &i)
        guard i < b.count else { return false }
        if b[i] == UInt8(ascii: "}") {
          i += 1
          return true
        }
        guard b[i] == UInt8(ascii: ",") else { return false }
        i += 1
        skipWhitespace(b, &i)
      }
    case UInt8(ascii: "["):
      i += 1
      skipWhitespace(b, &i)
      if i < b.count, b[i] == UInt8(ascii: "]") {
        i += 1
        return true
      }
      while true {
        guard value(b, &i, depth: depth + 1) else { return false }
        skipWhitespace(b, &i)
        guard i < b.count else { return false }
        if b[i] == UInt8(ascii: "]") {
          i += 1
          return true
        }
        guard b[i] == UInt8(ascii: ",") else { return false }
        i += 1
        skipWhitespace(b, &i)
      }
    case UInt8(ascii: "\""): return string(b, &i)
    case UInt8(ascii: "t"): return literal(b, &i, "true")
    case UInt8(ascii: "f"): return literal(b, &i, "false")
    case UInt8(ascii: "n"): return literal(b, &i, "null")
    default: return number(b, &i)
    }
  }

  private static func literal(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ word: StaticString) -> Bool {
    let count = word.utf8CodeUnitCount
    guard i + count <= b.count else { return false }
    for offset in 0..<count where b[i + offset] != word.utf8Start[offset] { return false }
    i += count
    return true
  }

  private static func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
    i += 1
    while i < b.count {
      let byte = b[i]
      i += 1
      switch byte {
      case UInt8(ascii: "\""): return true
      case 0..<0x20: return false
      case UInt8(ascii: "\\"):
        guard i < b.count else { return false }
        let escaped = b[i]
        i += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
          UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
          continue
        case UInt8(ascii: "u"):
          guard i + 4 <= b.count else { return false }
          for offset in 0..<4 where !isHexDigit(b[i + offset]) { return false }
          i += 4
        default: return false
        }
      default: continue
      }
    }
    return false
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
  }

  private static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
    func digits() -> Int {
      let start = i
      while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
      return i - start
    }
    if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
    guard i < b.count else { return false }
    if b[i] == UInt8(ascii: "0") {
      i += 1
    } else {
      guard digits() > 0 else { return false }
    }
    if i < b.count, b[i] == UInt8(ascii: ".") {
      i += 1
      guard digits() > 0 else { return false }
    }
    if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
      i += 1
      if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
      guard digits() > 0 else { return false }
    }
    return true
  }
}

/// ISO 8601 text of the log's microsecond timestamps, in UTC, computed without calendars
/// (so it is fast, and the same on every platform).
package enum ISOTime {
  /// `2026-01-01T00:00:00.000000Z` (`fractionDigits` 6, 3 or 0).
  package static func string(micros: Int64, fractionDigits: Int = 6) -> String {
    let (seconds, fraction) = floorDivide(micros, 1_000_000)
    let (days, secondOfDay) = floorDivide(seconds, 86_400)
    let (year, month, day) = CivilDate.from(days: days)
    var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
    text += "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
    switch fractionDigits {
    case 6: text += "." + pad(fraction, 6)
    case 3: text += "." + pad(fraction / 1000, 3)
    default: break
    }
    return text + "Z"
  }

  /// `2026-01-01`: the UTC day of a timestamp.
  package static func day(micros: Int64) -> String {
    let (days, _) = floorDivide(floorDivide(micros, 1_000_000).0, 86_400)
    let (year, month, day) = CivilDate.from(days: days)
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
  }

  /// Parses `YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fraction]]` and `Z` or `±HH:MM`
  /// (UTC when no zone is given), into microseconds since 1970.
  package static func parse(_ text: String) -> Int64? {
    var scanner = Array(text.utf8)[...]
    func number(_ digits: Int) -> Int64? {
      guard scanner.count >= digits else { return nil }
      var value: Int64 = 0
      for _ in 0..<digits {
        let byte = scanner.removeFirst()
        guard (0x30...0x39).contains(byte) else { return nil }
        value = value * 10 + Int64(byte - 0x30)
      }
      return value
    }
    func take(_ character: Character) -> Bool {
      guard let first = scanner.first, first == character.asciiValue else { return false }
      scanner.removeFirst()
      return true
    }
    guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    var micros = days(fromCivil: year, month, day) * 86_400_000_000
    if take("T") || take("t") || take(" ") {
      guard let hour = number(2), take(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
      micros += (hour * 3600 + minute * 60) * 1_000_000
      if take(":") {
        guard let second = number(2), second < 61 else { return nil }
        micros += second * 1_000_000
        if take(".") || take(",") {
          var scale: Int64 = 100_000
          var digits = 0
          while let byte = scanner.first, (0x30...0x39).contains(byte) {
            scanner.removeFirst()
            micros += Int64(byte - 0x30) * scale
            scale /= 10
            digits += 1
          }
          guard digits > 0 else { return nil }
        }
      }
      if take("Z") || take("z") {
      } else if let sign = scanner.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
        scanner.removeFirst()
        guard let hours = number(2) else { return nil }
        _ = take(":")
        guard let minutes = number(2) else { return nil }
        let offset = (hours * 3600 + minutes * 60) * 1_000_000
        micros += sign == UInt8(ascii: "+") ? -offset : offset
      }
    }
    return scanner.isEmpty ? micros : nil
  }

  /// The quotient rounded towards minus infinity and the remainder (`0..<divisor`), for a positive
  /// `divisor`; defined for every `value`, `Int64.min` included.
  static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
    return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date.
  private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}

extension Array where Element == UInt8 {
  /// Parses lower- or upper-case hexadecimal text; `nil` if it is not.
  init?(hex text: String) {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    func value(_ digit: UInt8) -> UInt8? {
      switch digit {
      case 0x30...0x39: digit - 0x30
      case 0x61...0x66: digit - 0x61 + 10
      case 0x41...0x46: digit - 0x41 + 10
      default: nil
      }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    self = bytes
  }
}
