/// Bounds-checked big-endian reading from a byte buffer; every read past the
/// end throws ``FormatError`` naming the field, never traps.
struct ByteReader {
  let buffer: UnsafeRawBufferPointer
  private(set) var offset = 0

  init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

  var remaining: Int { buffer.count - offset }

  @inline(__always)
  mutating func integer<T: FixedWidthInteger>(_: T.Type, _ field: StaticString) throws(FormatError) -> T {
    let size = MemoryLayout<T>.size
    guard remaining >= size else { throw FormatError("truncated \(field): needs \(size) bytes, \(remaining) remain") }
    defer { offset += size }
    return T(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
  }

  mutating func bytes(_ count: Int, _ field: StaticString) throws(FormatError) -> UnsafeRawBufferPointer {
    guard count >= 0, remaining >= count else {
      throw FormatError("truncated \(field): needs \(count) bytes, \(remaining) remain")
    }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
  }

  mutating func string(_ count: Int, _ field: StaticString) throws(FormatError) -> String {
    let raw = try bytes(count, field)
    guard let string = String(validating: raw, as: UTF8.self) else { throw FormatError("invalid UTF-8 in \(field)") }
    return string
  }
}
