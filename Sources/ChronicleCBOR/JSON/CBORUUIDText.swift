import Foundation

/// The canonical 8-4-4-4-12 form, uppercase like `UUID.uuidString`.
enum CBORUUIDText {
  private static let digits: [Character] = Array("0123456789ABCDEF")

  static func format(_ bytes: [UInt8]) -> String {
    var s = ""
    s.reserveCapacity(36)
    for (i, byte) in bytes.enumerated() {
      if i == 4 || i == 6 || i == 8 || i == 10 { s.append("-") }
      s.append(digits[Int(byte >> 4)])
      s.append(digits[Int(byte & 0xf)])
    }
    return s
  }
}
