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
