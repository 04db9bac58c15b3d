import Foundation

/// Low-level serialization helpers shared by `CBORValue` and `CBOREncoder`.
/// Inlinable, so that `CBORWriter`'s calls in the app's own conformances inline them.
@usableFromInline enum CBORHead {
  /// Writes an initial byte for `major` with the shortest argument form of `argument`.
  @inlinable @inline(__always)
  static func head(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
    let m = major << 5
    if argument < 24 {
      out.append(m | UInt8(truncatingIfNeeded: argument))
    } else if argument <= 0xff {
      out.append(m | 24)
      out.append(UInt8(truncatingIfNeeded: argument))
    } else if argument <= 0xffff {
      out.append(m | 25)
      bigEndian(argument, bytes: 2, into: &out)
    } else if argument <= 0xffff_ffff {
      out.append(m | 26)
      bigEndian(argument, bytes: 4, into: &out)
    } else {
      out.append(m | 27)
      bigEndian(argument, bytes: 8, into: &out)
    }
  }

  /// Appends the low `bytes` bytes of `value`, most significant first.
  @inlinable @inline(__always)
  static func bigEndian(_ value: UInt64, bytes: Int, into out: inout [UInt8]) {
    var shift = (bytes - 1) * 8
    while shift >= 0 {
      out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
      shift -= 8
    }
  }

  /// Writes a definite-length text string.
  @inlinable @inline(__always)
  static func text(_ s: String, into out: inout [UInt8]) {
    func write(_ utf8: UnsafeBufferPointer<UInt8>) {
      head(3, UInt64(utf8.count), into: &out)
      out.append(contentsOf: utf8)
    }
    // A native string's bytes (a small one's copied to the stack) without copying the string first.
    if s.utf8.withContiguousStorageIfAvailable(write) != nil { return }
    var s = s
    s.withUTF8(write)
  }

  /// Writes a signed integer as major type 0 or 1.
  @inlinable @inline(__always)
  static func int(_ v: Int64, into out: inout [UInt8]) {
    if v >= 0 {
      head(0, UInt64(v), into: &out)
    } else {
      head(1, ~UInt64(bitPattern: v), into: &out)
    }
  }
}
