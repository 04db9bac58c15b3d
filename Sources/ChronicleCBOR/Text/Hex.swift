/// The lower-case hexadecimal digits.
private let lowerHexDigits = Array("0123456789abcdef".utf8)

extension Array where Element == UInt8 {
  /// Lower-case hexadecimal, two digits a byte: `[0x0a, 0xff].hex == "0aff"`.
  package var hex: String { hex(separator: "") }

  /// Lower-case hexadecimal with `separator` between bytes: `[0x0a, 0xff].hex(separator: " ") == "0a ff"`.
  package func hex(separator: String) -> String {
    let separator = Array(separator.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(count * (2 + separator.count))
    for (index, byte) in enumerated() {
      if index > 0, !separator.isEmpty { out.append(contentsOf: separator) }
      out.append(lowerHexDigits[Int(byte >> 4)])
      out.append(lowerHexDigits[Int(byte & 0xF)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Parses lower- or upper-case hexadecimal text, two digits a byte; `nil` for an odd number of
  /// digits or any character that is not a hexadecimal digit.
  package init?(hex text: String) {
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
