/// Text helpers shared by the JSON renderings of payloads and of exports.

/// Dates of the proleptic Gregorian calendar from day counts.
enum CivilDate {
  /// Year, month and day of a count of days since 1970-01-01.
  static func from(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}

/// JSON string literals.
enum JSONString {
  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// Appends `text` as a quoted JSON string: `"` and `\` escaped with a backslash,
  /// control characters as `\u00XX`, or — with `shortEscapes` — newline, return
  /// and tab as `\n`, `\r`, `\t`.
  static func append(_ text: String, to out: inout [UInt8], shortEscapes: Bool) {
    out.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        out.append(UInt8(ascii: "\\"))
        out.append(byte)
      case 0x0A where shortEscapes: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case 0x0D where shortEscapes: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case 0x09 where shortEscapes: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0..<0x20:
        out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0xF)])
      default:
        out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
  }
}
