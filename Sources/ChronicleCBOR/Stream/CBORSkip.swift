import Foundation

/// Navigation over CBOR already known to be well formed (written by this
/// encoder, or validated by ``CBORParser/validate(_:)``): no bounds checks beyond
/// the structure's own lengths.
enum CBORSkip {
  /// Bytes of a definite-length header for `count`.
  static func headerSize(_ count: Int) -> Int {
    switch count {
    case ..<24: 1
    case ..<256: 2
    case ..<65_536: 3
    case ..<4_294_967_296: 5
    default: 9
    }
  }

  /// The argument of the head at `position` and the offset after the head.
  @inline(__always)
  static func head(_ bytes: UnsafeRawBufferPointer, at position: Int) -> (argument: UInt64, next: Int) {
    let ai = bytes[position] & 0x1f
    switch ai {
    case 24: return (UInt64(bytes[position + 1]), position + 2)
    case 25:
      return (UInt64(UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: position + 1, as: UInt16.self))), position + 3)
    case 26:
      return (UInt64(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: position + 1, as: UInt32.self))), position + 5)
    case 27: return (UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: position + 1, as: UInt64.self)), position + 9)
    default: return (UInt64(ai), position + 1)
    }
  }

  /// The offset just after the data item at `position`.
  static func end(of bytes: UnsafeRawBufferPointer, at position: Int) -> Int {
    let initial = bytes[position]
    let major = initial >> 5
    if initial & 0x1f == 31 {
      // Indefinite length: items (or chunks, or key/value pairs) up to a break.
      var next = position + 1
      while bytes[next] != 0xff { next = end(of: bytes, at: next) }
      return next + 1
    }
    let (argument, next) = head(bytes, at: position)
    switch major {
    case 2, 3: return next + Int(argument)
    case 4, 5:
      var current = next
      for _ in 0..<(major == 5 ? 2 * Int(argument) : Int(argument)) { current = end(of: bytes, at: current) }
      return current
    case 6: return end(of: bytes, at: next)
    default: return next
    }
  }

  /// Whether the item at `position` is a definite-length text string equal to `key`.
  static func isText(_ bytes: UnsafeRawBufferPointer, at position: Int, equalTo key: String) -> Bool {
    guard bytes[position] >> 5 == 3, bytes[position] & 0x1f != 31 else { return false }
    let (length, start) = head(bytes, at: position)
    var key = key
    return key.withUTF8 { utf8 in
      utf8.count == Int(length)
        && (utf8.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress! + start, utf8.count) == 0)
    }
  }

  /// The definite-length text string at `position`.
  static func text(_ bytes: UnsafeRawBufferPointer, at position: Int) -> String {
    let (length, start) = head(bytes, at: position)
    return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + Int(length))]), as: UTF8.self)
  }
}
