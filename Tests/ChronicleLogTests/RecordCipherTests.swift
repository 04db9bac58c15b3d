import Crypto
import Foundation
import Testing

@testable import ChronicleLog

/// The record cipher's sealed records are standard AES-256-GCM over the documented associated data:
/// swift-crypto's `AES.GCM`, called directly, opens what it seals and seals what it opens.
@Suite struct RecordCipherTests {
  let key = EncryptionKey.random()
  var cipher: RecordCipher { RecordCipher(ring: try? KeyRing([key]), logID: (0..<16).map { UInt8($0 &* 3) }) }

  /// A clear header, then `plaintext` sealed after it: what the cipher writes, and what it bound.
  func sealed(_ plaintext: [UInt8], seq: UInt64) throws -> (header: [UInt8], nonce: [UInt8], sealed: [UInt8]) {
    let nonce = RecordCipher.nonce()
    var writer = ByteWriter()
    writer.append(Array("header ".utf8))
    writer.append(nonce)
    let header = writer.bytes
    try cipher.seal(
      plaintext, key: key, nonce: nonce, context: RecordCipher.entryContext, seq: seq, headerStart: 0, into: &writer)
    return (header, nonce, Array(writer.bytes[header.count...]))
  }

  @Test(arguments: [1, 15, 16, 17, 255, 4_099])
  func sealsWhatSwiftCryptoOpens(size: Int) throws {
    let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    let (header, nonce, sealed) = try sealed(plaintext, seq: 42)
    #expect(sealed.count == size + RecordCipher.tagSize)
    let aad = header.withUnsafeBytes { cipher.associatedData(RecordCipher.entryContext, seq: 42, header: $0) }
    let box = try AES.GCM.SealedBox(
      nonce: try AES.GCM.Nonce(data: nonce), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
    #expect(Array(try AES.GCM.open(box, using: key.key, authenticating: aad)) == plaintext)
    // Another seq in the associated data: swift-crypto refuses it too.
    let other = header.withUnsafeBytes { cipher.associatedData(RecordCipher.entryContext, seq: 43, header: $0) }
    #expect(throws: (any Error).self) { try AES.GCM.open(box, using: key.key, authenticating: other) }
  }

  @Test(arguments: [1, 16, 300, 4_099])
  func opensWhatSwiftCryptoSeals(size: Int) throws {
    let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
    let header = Array("another header".utf8)
    let aad = header.withUnsafeBytes { cipher.associatedData(RecordCipher.snapshotContext, seq: nil, header: $0) }
    let box = try AES.GCM.seal(plaintext, using: key.key, authenticating: aad)
    // Ciphertext and tag next to each other, as stored, and apart (copied first).
    let stored = Array(box.ciphertext) + Array(box.tag)
    let nonce = Array(box.nonce)
    func open(_ ciphertext: UnsafeRawBufferPointer, _ tag: UnsafeRawBufferPointer) throws -> [UInt8] {
      try nonce.withUnsafeBytes { nonce in
        try header.withUnsafeBytes { header in
          try cipher.open(
            keyID: key.id, nonce: nonce, ciphertext: ciphertext, tag: tag, context: RecordCipher.snapshotContext,
            seq: nil, header: header)
        }
      }
    }
    let together = try stored.withUnsafeBytes { bytes in
      try open(UnsafeRawBufferPointer(rebasing: bytes[..<size]), UnsafeRawBufferPointer(rebasing: bytes[size...]))
    }
    #expect(together == plaintext)
    let apart = Array(box.ciphertext), tag = Array(box.tag)
    let separate = try apart.withUnsafeBytes { ciphertext in try tag.withUnsafeBytes { tag in try open(ciphertext, tag) } }
    #expect(separate == plaintext)
    // One changed bit of the ciphertext is refused, naming the key.
    var tampered = stored
    tampered[size / 2] ^= 0x10
    #expect(throws: RecordCipher.Failure.self) {
      try tampered.withUnsafeBytes { bytes in
        try open(UnsafeRawBufferPointer(rebasing: bytes[..<size]), UnsafeRawBufferPointer(rebasing: bytes[size...]))
      }
    }
  }

  /// Nonces come from a pool refilled every 341 draws: across several refills none repeats.
  @Test func noncesNeverRepeat() {
    let nonces = (0..<2_000).map { _ in RecordCipher.nonce() }
    #expect(nonces.allSatisfy { $0.count == RecordCipher.nonceSize })
    #expect(Set(nonces).count == nonces.count)
  }
}
