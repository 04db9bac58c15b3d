import CChronicleSHA256

/// SHA-256 with its state on the stack, for the hashes every append computes (the chain hash, the
/// Merkle tree's leaf and node hashes).
///
/// swift-crypto's `SHA256` allocates and frees a context object per hash, which costs more than
/// hashing a short entry. This is the `CChronicleSHA256` module: the CPU's SHA extensions where it has them
/// (x86-64 SHA-NI), its portable rounds elsewhere. A plain value (no references), so making,
/// copying and dropping one costs nothing beyond its bytes. The tests check both paths against
/// swift-crypto and FIPS 180-4's examples.
struct StackSHA256 {
  /// Whether this CPU runs the SHA extensions (else the portable rounds).
  static var usesCPUExtensions: Bool { csha256_available() != 0 }

  private var context = csha256_ctx()

  init() {
    csha256_init(&context)
  }

  /// A hasher on the portable rounds whatever the CPU has: for the tests.
  init(portable: Bool) {
    if portable { csha256_init_portable(&context) } else { csha256_init(&context) }
  }

  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    if let base = bytes.baseAddress, bytes.count > 0 { csha256_update(&context, base, bytes.count) }
  }

  /// Hashes the 8 bytes of `value`, big-endian.
  mutating func update(bigEndian value: UInt64) {
    withUnsafeBytes(of: value.bigEndian) { update($0) }
  }

  /// Writes the 32-byte digest to the start of `output`.
  mutating func finalize(into output: UnsafeMutableRawBufferPointer) {
    precondition(output.count >= 32, "a SHA-256 digest needs 32 bytes, not \(output.count)")
    csha256_final(&context, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
  }

  /// Hashes `bytesA` into `a` and `bytesB` into `b`: two independent messages whose blocks go
  /// through the CPU's SHA unit interleaved, which costs little more than one of them alone.
  static func update(
    _ a: inout StackSHA256, _ bytesA: UnsafeRawBufferPointer, _ b: inout StackSHA256, _ bytesB: UnsafeRawBufferPointer
  ) {
    guard let baseA = bytesA.baseAddress, let baseB = bytesB.baseAddress else {
      a.update(bytesA)
      b.update(bytesB)
      return
    }
    csha256_update2(&a.context, baseA, bytesA.count, &b.context, baseB, bytesB.count)
  }

  /// Writes the digests of `a` and `b` (32 bytes each) to the starts of `outputA` and `outputB`.
  static func finalize(
    _ a: inout StackSHA256, into outputA: UnsafeMutableRawBufferPointer,
    _ b: inout StackSHA256, into outputB: UnsafeMutableRawBufferPointer
  ) {
    precondition(outputA.count >= 32 && outputB.count >= 32, "a SHA-256 digest needs 32 bytes")
    csha256_final2(
      &a.context, outputA.baseAddress!.assumingMemoryBound(to: UInt8.self),
      &b.context, outputB.baseAddress!.assumingMemoryBound(to: UInt8.self))
  }

  /// The digest as an array.
  mutating func finalize() -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
      finalize(into: UnsafeMutableRawBufferPointer(buffer))
      count = 32
    }
  }
}
