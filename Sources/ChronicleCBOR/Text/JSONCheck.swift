/// A strict RFC 8259 syntax check of a JSON text (one value, optional surrounding whitespace).
package enum JSONCheck {
  /// Whether `bytes` is exactly one JSON value; nesting deeper than 512 counts as invalid.
  package static func isValid(_ bytes: [UInt8]) -> Bool {
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
