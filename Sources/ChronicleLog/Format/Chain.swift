/// The hash chain: each entry's hash covers the previous hash, its sequence number and its bytes.
enum Chain {
  /// The previous hash of the first entry of a log that was never compacted: 32 zero bytes.
  static let genesis = [UInt8](repeating: 0, count: 32)

  /// SHA-256(previous ‖ seq u64 BE ‖ body), written into `output` (32 bytes).
  static func hash(
    previous: UnsafeRawBufferPointer, seq: UInt64, body: UnsafeRawBufferPointer,
    into output: UnsafeMutableRawBufferPointer, path: SHA256Path = .current
  ) {
    var hasher = StackSHA256(path: path)
    hasher.update(previous)
    hasher.update(bigEndian: seq)
    hasher.update(body)
    hasher.finalize(into: output)
  }

  /// SHA-256(previous ‖ seq u64 BE ‖ body).
  static func hash(previous: [UInt8], seq: UInt64, body: UnsafeRawBufferPointer) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    previous.withUnsafeBytes { prev in
      out.withUnsafeMutableBytes { hash(previous: prev, seq: seq, body: body, into: $0) }
    }
    return out
  }
}
