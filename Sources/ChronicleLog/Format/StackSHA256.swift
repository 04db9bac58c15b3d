import CChronicleSHA256
import Crypto
import Foundation

/// How this process computes the log's SHA-256 hashes: with the CPU's SHA extensions where it has
/// them (x86-64 SHA-NI, the `CChronicleSHA256` module), with swift-crypto everywhere else. Both give
/// the same digests; the first takes no heap and hashes two messages at once.
package enum SHA256Path: Sendable {
  case cpuExtensions
  case swiftCrypto

  /// The path of this process, chosen once: ``cpuExtensions`` where the CPU has them, unless the
  /// environment variable `CHRONICLE_SHA256` is `swift-crypto`, which takes the other path on any
  /// CPU (for tests, and to rule the fast path out when chasing a problem).
  package static let current: SHA256Path =
    csha256_available() != 0 && ProcessInfo.processInfo.environment["CHRONICLE_SHA256"] != "swift-crypto"
    ? .cpuExtensions : .swiftCrypto

  /// Whether this CPU has the SHA extensions, whatever path was chosen.
  package static var cpuHasExtensions: Bool { csha256_available() != 0 }
}

/// SHA-256 for the hashes every append computes (the chain hash, the Merkle tree's leaf and node
/// hashes), on the process's ``SHA256Path``.
///
/// swift-crypto's `SHA256` allocates and frees a context object per hash, which costs more than
/// hashing a short entry; on the CPU's extensions the state is a plain value on the stack. The
/// tests check both paths against each other and FIPS 180-4's examples.
struct StackSHA256 {
  /// The state on the CPU's extensions.
  private var context = csha256_ctx()
  /// The state on swift-crypto (`nil` on the CPU's extensions).
  private var portable: SHA256?

  init(path: SHA256Path = .current) {
    switch path {
    case .cpuExtensions: csha256_init(&context)
    case .swiftCrypto: portable = SHA256()
    }
  }

  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard portable == nil else {
      portable!.update(bufferPointer: bytes)
      return
    }
    if let base = bytes.baseAddress, bytes.count > 0 { csha256_update(&context, base, bytes.count) }
  }

  /// Hashes the 8 bytes of `value`, big-endian.
  mutating func update(bigEndian value: UInt64) {
    withUnsafeBytes(of: value.bigEndian) { update($0) }
  }

  /// Writes the 32-byte digest to the start of `output`.
  mutating func finalize(into output: UnsafeMutableRawBufferPointer) {
    precondition(output.count >= 32, "a SHA-256 digest needs 32 bytes, not \(output.count)")
    if let portable {
      portable.finalize().withUnsafeBytes { output.copyMemory(from: $0) }
    } else {
      csha256_final(&context, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }
  }

  /// Hashes `bytesA` into `a` and `bytesB` into `b`: two independent messages whose blocks go
  /// through the CPU's SHA unit interleaved, which costs little more than one of them alone (one
  /// after the other on swift-crypto).
  static func update(
    _ a: inout StackSHA256, _ bytesA: UnsafeRawBufferPointer, _ b: inout StackSHA256, _ bytesB: UnsafeRawBufferPointer
  ) {
    guard a.portable == nil, b.portable == nil, let baseA = bytesA.baseAddress, let baseB = bytesB.baseAddress else {
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
    guard a.portable == nil, b.portable == nil else {
      a.finalize(into: outputA)
      b.finalize(into: outputB)
      return
    }
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
