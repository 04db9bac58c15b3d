import Crypto
import Foundation
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// The SHA-256 of the log's hot paths (`StackSHA256`, the `CChronicleSHA256` module where the CPU has the
/// SHA extensions): FIPS 180-4's examples, and swift-crypto's digest for every length across the
/// block and padding boundaries, fed whole and in random pieces.
@Suite struct StackSHA256Tests {
  private func digest(_ pieces: [[UInt8]], path: SHA256Path = .current) -> [UInt8] {
    var hasher = StackSHA256(path: path)
    for piece in pieces { piece.withUnsafeBytes { hasher.update($0) } }
    return hasher.finalize()
  }

  private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  /// Both paths: the CPU's SHA extensions (where it has them) and swift-crypto.
  @Test(arguments: SHA256Path.onThisCPU) func fipsExamples(path: SHA256Path) {
    #expect(hex(digest([], path: path)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(
      hex(digest([Array("abc".utf8)], path: path))
        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      hex(digest([Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)], path: path))
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    #expect(
      hex(digest(Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 1_000), count: 1_000), path: path))
        == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test(arguments: SHA256Path.onThisCPU) func everyLengthMatchesSwiftCrypto(path: SHA256Path) {
    var random = SplitMix64(seed: 0x5A256)
    for length in 0...300 {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
      let expected = Array(SHA256.hash(data: bytes))
      #expect(digest([bytes], path: path) == expected, "\(length) bytes in one piece")
      // The same bytes in random pieces, empty ones included.
      var pieces: [[UInt8]] = []
      var rest = bytes[...]
      while !rest.isEmpty || pieces.count < 2 {
        let take = Int.random(in: 0...min(rest.count, 70), using: &random)
        pieces.append(Array(rest.prefix(take)))
        rest = rest.dropFirst(take)
      }
      #expect(digest(pieces, path: path) == expected, "\(length) bytes in \(pieces.map(\.count))")
    }
  }

  /// Two messages hashed together (their blocks interleaved) give each message's own digest, for
  /// lengths on both sides of the block and padding boundaries, fed in random pieces.
  /// Also with one of the two on swift-crypto, which then hashes the two one after the other.
  @Test(arguments: [(SHA256Path.current, SHA256Path.current), (.swiftCrypto, .current), (.current, .swiftCrypto)])
  func twoMessagesAtOnceMatchSwiftCrypto(pathA: SHA256Path, pathB: SHA256Path) {
    var random = SplitMix64(seed: 0x2A2A)
    for lengthA in 0...200 {
      let lengthB = Int.random(in: 0...400, using: &random)
      let a = (0..<lengthA).map { _ in UInt8.random(in: 0...255, using: &random) }
      let b = (0..<lengthB).map { _ in UInt8.random(in: 0...255, using: &random) }
      var hasherA = StackSHA256(path: pathA)
      var hasherB = StackSHA256(path: pathB)
      var restA = a[...]
      var restB = b[...]
      while !restA.isEmpty || !restB.isEmpty {
        let pieceA = restA.prefix(Int.random(in: 0...150, using: &random))
        let pieceB = restB.prefix(Int.random(in: 0...150, using: &random))
        Array(pieceA).withUnsafeBytes { bytesA in
          Array(pieceB).withUnsafeBytes { StackSHA256.update(&hasherA, bytesA, &hasherB, $0) }
        }
        restA = restA.dropFirst(pieceA.count)
        restB = restB.dropFirst(pieceB.count)
      }
      var digestA = [UInt8](repeating: 0, count: 32)
      var digestB = [UInt8](repeating: 0, count: 32)
      digestA.withUnsafeMutableBytes { outA in
        digestB.withUnsafeMutableBytes { StackSHA256.finalize(&hasherA, into: outA, &hasherB, into: $0) }
      }
      #expect(digestA == Array(SHA256.hash(data: a)), "\(lengthA) bytes beside \(lengthB)")
      #expect(digestB == Array(SHA256.hash(data: b)), "\(lengthB) bytes beside \(lengthA)")
    }
  }

  @Test(arguments: SHA256Path.onThisCPU) func largeInputsMatchSwiftCrypto(path: SHA256Path) {
    var random = SplitMix64(seed: 77)
    for length in [4_095, 4_096, 65_537, 1 << 20] {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
      #expect(digest([bytes], path: path) == Array(SHA256.hash(data: bytes)), "\(length) bytes")
    }
  }

  @Test func theCPUExtensionsAreUsedWhereTheKernelListsThem() throws {
    #if arch(x86_64) && os(Linux)
      let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
      let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { Set($0.split(separator: " ")) } ?? []
      #expect(SHA256Path.cpuHasExtensions == (flags.contains("sha_ni") && flags.contains("sse4_1")))
      let forced = ProcessInfo.processInfo.environment["CHRONICLE_SHA256"] == "swift-crypto"
      #expect((SHA256Path.current == .cpuExtensions) == (SHA256Path.cpuHasExtensions && !forced))
    #else
      #expect(!SHA256Path.cpuHasExtensions)
      #expect(SHA256Path.current == .swiftCrypto)
    #endif
  }

  @Test func theEntryHashesUseIt() {
    // The chain hash and the tree's hashes are SHA-256 of their documented inputs.
    let body: [UInt8] = Array("an entry's body".utf8)
    let previous = [UInt8](repeating: 0xAB, count: 32)
    let chain = body.withUnsafeBytes { Chain.hash(previous: previous, seq: 9, body: $0) }
    #expect(chain == Array(SHA256.hash(data: previous + withUnsafeBytes(of: UInt64(9).bigEndian) { Array($0) } + body)))
    #expect(MerkleHash.leaf(body) == Array(SHA256.hash(data: [0] + body)))
    #expect(MerkleHash.node(chain, previous) == Array(SHA256.hash(data: [1] + chain + previous)))
  }
}

extension SHA256Path {
  /// The paths this machine can run: swift-crypto, and the CPU's extensions where it has them.
  static var onThisCPU: [SHA256Path] { cpuHasExtensions ? [.cpuExtensions, .swiftCrypto] : [.swiftCrypto] }
}
