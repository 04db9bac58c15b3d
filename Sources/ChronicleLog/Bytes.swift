/// Big-endian fixed-width writing into a growing byte array.
struct ByteWriter {
  var bytes: [UInt8]

  init(capacity: Int = 256) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  mutating func append(_ value: UInt8) { bytes.append(value) }
  mutating func append<T: FixedWidthInteger>(bigEndian value: T) {
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
  }
  mutating func append(_ data: some Collection<UInt8>) { bytes.append(contentsOf: data) }
  mutating func append(utf8 string: String) {
    var string = string
    string.withUTF8 { bytes.append(contentsOf: $0) }
  }
}

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

/// A violation of the byte layout of `docs/log-format.md`.
struct FormatError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// The 8-byte big-endian key of sequence number `seq`.
@inline(__always)
func withSequenceKey<R>(_ seq: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
  try withUnsafeBytes(of: seq.bigEndian, body)
}

/// Reads an 8-byte big-endian key.
@inline(__always)
func sequence(fromKey key: UnsafeRawBufferPointer) throws(FormatError) -> UInt64 {
  guard key.count == 8 else { throw FormatError("key of \(key.count) bytes, expected 8") }
  var reader = ByteReader(key)
  return try reader.integer(UInt64.self, "key")
}
