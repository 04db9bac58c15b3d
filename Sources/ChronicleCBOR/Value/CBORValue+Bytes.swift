import Foundation

extension CBORValue {
  /// Parses exactly one data item that must span all of `bytes` (trailing bytes are an error).
  ///
  /// Both definite and indefinite lengths are accepted. Throws `CBORError`
  /// for malformed input: truncation, reserved additional-information values,
  /// invalid UTF-8, misplaced break codes, nesting deeper than 256 levels, or
  /// trailing bytes.
  public init(decoding bytes: some Collection<UInt8>) throws {
    if let parsed = try bytes.withContiguousStorageIfAvailable({ buffer in
      try CBORValue(decoding: UnsafeRawBufferPointer(buffer))
    }) {
      self = parsed
    } else {
      self = try Array(bytes).withUnsafeBytes { try CBORValue(decoding: $0) }
    }
  }

  /// Parses exactly one data item that must span all of `buffer` (trailing bytes are an error).
  ///
  /// See `init(decoding:)` for the accepted syntax and the errors thrown.
  public init(decoding buffer: UnsafeRawBufferPointer) throws {
    self = try CBORParser.parseDocument(buffer)
  }

  /// Deterministic, definite-length, shortest-integer-form serialization.
  ///
  /// Integers, lengths and tag numbers use the shortest argument encoding;
  /// strings, arrays and maps always have definite lengths; map entries are
  /// written in stored order (they are not sorted); floats keep the width of
  /// their case (`float16` → 3 bytes, `float32` → 5, `float64` → 9).
  public func encoded() -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(64)
    write(into: &out)
    return out
  }

  /// Appends the serialization of `self` to `out`.
  func write(into out: inout [UInt8]) {
    switch self {
    case .unsigned(let n):
      CBORHead.head(0, n, into: &out)
    case .negative(let n):
      CBORHead.head(1, n, into: &out)
    case .bytes(let b):
      CBORHead.head(2, UInt64(b.count), into: &out)
      out.append(contentsOf: b)
    case .text(let s):
      CBORHead.text(s, into: &out)
    case .array(let items):
      CBORHead.head(4, UInt64(items.count), into: &out)
      for item in items { item.write(into: &out) }
    case .map(let entries):
      CBORHead.head(5, UInt64(entries.count), into: &out)
      for entry in entries {
        entry.key.write(into: &out)
        entry.value.write(into: &out)
      }
    case .tagged(let tag, let content):
      CBORHead.head(6, tag, into: &out)
      content.write(into: &out)
    case .bool(let b):
      out.append(b ? 0xf5 : 0xf4)
    case .null:
      out.append(0xf6)
    case .undefined:
      out.append(0xf7)
    case .simple(let n):
      if n < 24 {
        out.append(0xe0 | n)
      } else if n < 32 {
        out.append(0xf7)
      } else {
        out.append(0xf8)
        out.append(n)
      }
    case .float16(let f):
      let h = CBORHalf.bits(from: f)
      out.append(0xf9)
      out.append(UInt8(truncatingIfNeeded: h >> 8))
      out.append(UInt8(truncatingIfNeeded: h))
    case .float32(let f):
      out.append(0xfa)
      CBORHead.bigEndian(UInt64(f.bitPattern), bytes: 4, into: &out)
    case .float64(let d):
      out.append(0xfb)
      CBORHead.bigEndian(d.bitPattern, bytes: 8, into: &out)
    }
  }
}

extension CBORValue {
  /// The CBOR integer for `v` (`.unsigned` or `.negative`).
  @inline(__always)
  static func integer(_ v: Int64) -> CBORValue {
    v >= 0 ? .unsigned(UInt64(v)) : .negative(~UInt64(bitPattern: v))
  }
}
