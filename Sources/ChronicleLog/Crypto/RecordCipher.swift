import CAEAD
import Crypto
import Foundation

/// Seals and opens the encrypted parts of entries and snapshots (`docs/log-format.md`, *Encrypted
/// records*): AES-256-GCM, a fresh random 96-bit nonce per record, and associated data that binds
/// the ciphertext to the log, the record's position and its clear header.
struct RecordCipher: Sendable {
  static let nonceSize = 12
  static let tagSize = 16
  /// The domain separation prefixes of the associated data.
  static let entryContext = Array("chronicle-entry".utf8)
  static let snapshotContext = Array("chronicle-snapshot".utf8)

  /// The keys; `nil` for a reader without any (it verifies, and sees records as encrypted).
  let ring: KeyRing?
  /// The log's 16-byte identifier (meta `log-id`), part of every record's associated data.
  let logID: [UInt8]

  /// Why a record did not open.
  enum Failure: Error {
    /// The ring does not hold the key (or there is no ring).
    case missingKey(UInt32)
    /// The key is there but the ciphertext does not authenticate.
    case rejected(UInt32)
  }

  /// A fresh random nonce (``NonceSource``).
  static func nonce() -> [UInt8] {
    var writer = ByteWriter(capacity: nonceSize)
    NonceSource.append(to: &writer)
    return writer.bytes
  }

  /// The associated data: `context ‖ log id ‖ header`, where `header` starts with whatever
  /// position the record has (an entry's seq; a snapshot's header holds its own).
  func associatedData(_ context: [UInt8], seq: UInt64?, header: UnsafeRawBufferPointer) -> [UInt8] {
    var data = ByteWriter(capacity: context.count + logID.count + 8 + header.count)
    data.append(context)
    data.append(logID)
    if let seq { data.append(bigEndian: seq) }
    data.append(header)
    return data.bytes
  }

  /// Encrypts `plaintext` with the ring's newest key and `nonce`; appends ciphertext and tag to `writer`.
  /// `headerStart` is where the record's clear header begins in `writer` (it ends at the writer's end).
  func seal(
    _ plaintext: [UInt8], key: EncryptionKey, nonce: [UInt8], context: [UInt8], seq: UInt64?, headerStart: Int,
    into writer: inout ByteWriter
  ) throws(LogError) {
    let aad = writer.bytes.withUnsafeBytes {
      associatedData(context, seq: seq, header: UnsafeRawBufferPointer(rebasing: $0[headerStart...]))
    }
    if let aead = key.context {
      // Straight into the writer's bytes, under the key's own context.
      let start = writer.bytes.count
      let sealedCount = plaintext.count + Self.tagSize
      writer.bytes.append(contentsOf: repeatElement(0, count: sealedCount))
      let sealed = writer.bytes.withUnsafeMutableBufferPointer { out in
        plaintext.withUnsafeBufferPointer { input in
          nonce.withUnsafeBufferPointer { nonce in
            aad.withUnsafeBufferPointer { aad in
              caead_seal(
                aead, out.baseAddress! + start, nonce.baseAddress, input.baseAddress, input.count, aad.baseAddress,
                aad.count)
            }
          }
        }
      }
      guard sealed == 1 else {
        writer.bytes.removeLast(sealedCount)
        throw .invalidEntry(reason: "AES-GCM sealing failed with \(key)")
      }
      return
    }
    do {
      let box = try AES.GCM.seal(plaintext, using: key.key, nonce: try AES.GCM.Nonce(data: nonce), authenticating: aad)
      writer.append(box.ciphertext)
      writer.append(box.tag)
    } catch {
      throw .invalidEntry(reason: "AES-GCM sealing failed with \(key): \(error)")
    }
  }

  /// Decrypts a sealed part: `header` is the clear header the associated data covers.
  func open(
    keyID: UInt32, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
    context: [UInt8], seq: UInt64?, header: UnsafeRawBufferPointer
  ) throws(Failure) -> [UInt8] {
    guard let key = ring?.key(id: keyID) else { throw .missingKey(keyID) }
    guard nonce.count == Self.nonceSize, tag.count == Self.tagSize else { throw .rejected(keyID) }
    let aad = associatedData(context, seq: seq, header: header)
    if let aead = key.context {
      // The stored layouts keep the tag right after the ciphertext: open them in place.
      let contiguous = ciphertext.count == 0 || ciphertext.baseAddress! + ciphertext.count == tag.baseAddress
      let input = contiguous ? nil : Array(ciphertext) + Array(tag)
      var opened: Int32 = 0
      let plain = [UInt8](unsafeUninitializedCapacity: ciphertext.count) { out, count in
        opened = aad.withUnsafeBufferPointer { aad in
          func run(_ sealed: UnsafeRawPointer?, _ sealedCount: Int) -> Int32 {
            caead_open(
              aead, out.baseAddress, nonce.baseAddress?.assumingMemoryBound(to: UInt8.self),
              sealed?.assumingMemoryBound(to: UInt8.self), sealedCount, aad.baseAddress, aad.count)
          }
          if let input { return input.withUnsafeBytes { run($0.baseAddress, $0.count) } }
          return run(ciphertext.count == 0 ? tag.baseAddress : ciphertext.baseAddress, ciphertext.count + tag.count)
        }
        // BoringSSL fills the output with zeros when the tag does not match.
        if opened != 1 { out.initialize(repeating: 0) }
        count = ciphertext.count
      }
      guard opened == 1 else { throw .rejected(keyID) }
      return plain
    }
    do {
      let box = try AES.GCM.SealedBox(
        nonce: try AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
      let plain = try AES.GCM.open(box, using: key.key, authenticating: aad)
      return Array(plain)
    } catch {
      throw .rejected(keyID)
    }
  }
}
