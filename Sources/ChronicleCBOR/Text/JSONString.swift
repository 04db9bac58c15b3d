/// JSON string literals.
package enum JSONString {
  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// Appends `text` as a quoted JSON string: `"` and `\` escaped with a backslash,
  /// control characters as `\u00XX`, or — with `shortEscapes` — newline, return
  /// and tab as `\n`, `\r`, `\t`.
  package static func append(_ text: String, to out: inout [UInt8], shortEscapes: Bool) {
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
