import Foundation

/// Strict UTF-8 validation per RFC 3629 (no overlongs, surrogates or code
/// points above U+10FFFF), with an eight-bytes-at-a-time ASCII fast path.
enum CBORUTF8 {
  /// The text string whose UTF-8 is `bytes`, validated; `offset` locates the first byte for errors.
  @inline(__always)
  static func string(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(CBORError) -> String {
    let utf8 = bytes.assumingMemoryBound(to: UInt8.self)
    if let bad = firstInvalidByte(utf8) {
      throw CBORError(offset: offset + bad, reason: "invalid UTF-8 in text string")
    }
    return String(decoding: utf8, as: UTF8.self)
  }

  /// Index of the first byte of the first invalid sequence, or `nil` if `bytes` is valid UTF-8.
  static func firstInvalidByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    guard let p = bytes.baseAddress else { return nil }
    let n = bytes.count
    let raw = UnsafeRawPointer(p)
    var i = 0
    while i < n {
      if n - i >= 8 {
        let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
        if word & 0x8080_8080_8080_8080 == 0 {
          i += 8
          continue
        }
      }
      let b0 = p[i]
      if b0 < 0x80 {
        i += 1
        continue
      }
      if b0 < 0xc2 { return i }
      if b0 < 0xe0 {
        guard n - i >= 2, p[i + 1] & 0xc0 == 0x80 else { return i }
        i += 2
        continue
      }
      if b0 < 0xf0 {
        guard n - i >= 3 else { return i }
        let b1 = p[i + 1]
        let b2 = p[i + 2]
        guard b1 & 0xc0 == 0x80, b2 & 0xc0 == 0x80 else { return i }
        if b0 == 0xe0 && b1 < 0xa0 { return i }  // overlong
        if b0 == 0xed && b1 >= 0xa0 { return i }  // surrogate
        i += 3
        continue
      }
      if b0 < 0xf5 {
        guard n - i >= 4 else { return i }
        let b1 = p[i + 1]
        guard b1 & 0xc0 == 0x80, p[i + 2] & 0xc0 == 0x80, p[i + 3] & 0xc0 == 0x80 else { return i }
        if b0 == 0xf0 && b1 < 0x90 { return i }  // overlong
        if b0 == 0xf4 && b1 >= 0x90 { return i }  // above U+10FFFF
        i += 4
        continue
      }
      return i
    }
    return nil
  }
}
