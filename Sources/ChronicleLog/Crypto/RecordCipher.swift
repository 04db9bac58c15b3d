import Crypto
import Foundation

/// Seals and opens the encrypted parts of entries and snapshots (`docs/log-format.md`, *Encrypted
/// records*): AES-256-GCM, a fresh random 96-bit nonce per record, and associated data that binds
/// the ciphertext to the log, the record's position and its clear header. The cipher is swift-crypto's
/// `AES.GCM` (CryptoKit on Apple platforms, BoringSSL elsewhere).
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

  init(ring: KeyRing?, logID: [UInt8]) {
    self.ring = ring
    self.logID = logID
  }

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
    withAssociatedData(context, seq: seq, header: header) { Array($0) }
  }

  /// Calls `body` with the associated data (``associatedData(_:seq:header:)``) built in a temporary
  /// buffer, on the stack for the usual sizes: sealing and opening a record allocate nothing for it.
  func withAssociatedData<R>(
    _ context: [UInt8], seq: UInt64?, header: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R
  ) -> R {
    let count = context.count + logID.count + (seq == nil ? 0 : 8) + header.count
    return withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { buffer in
      var offset = 0
      func put(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        (buffer.baseAddress! + offset).copyMemory(from: source, byteCount: bytes.count)
        offset += bytes.count
      }
      context.withUnsafeBytes { put($0) }
      logID.withUnsafeBytes { put($0) }
      if let seq { withUnsafeBytes(of: seq.bigEndian) { put($0) } }
      put(header)
      return body(UnsafeRawBufferPointer(buffer))
    }
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
    do {
      let box = try AES.GCM.seal(plaintext, using: key.key, nonce: try AES.GCM.Nonce(data: nonce), authenticating: aad)
      writer.append(box.ciphertext)
      writer.append(box.tag)
    } catch {
      throw .invalidEntry(reason: "AES-GCM sealing failed with \(key): \(error)")
    }
  }

  /// Where an entry's parts lie in a buffer that holds it with its plaintext body still in the clear,
  /// followed by room for the tag: what ``seal(_:in:)`` seals in place. Plain values only (no
  /// reference to retain), so that a batch's array of them costs nothing but its memory.
  struct PendingSeal {
    /// The identifier of the key to seal with (one of the ring's).
    var keyID: UInt32
    /// The entry's sequence number (the associated data's position).
    var seq: UInt64
    /// The clear header the associated data covers: `headerStart ..< bodyStart`.
    var headerStart: Int
    /// The record's 12-byte nonce.
    var nonceAt: Int
    /// The plaintext: `bodyStart ..< bodyStart + bodyCount`, then ``tagSize`` bytes for the tag.
    var bodyStart: Int
    var bodyCount: Int
  }

  /// Seals `record`'s body in place in `buffer`: the plaintext becomes the ciphertext, and the
  /// tag is written after it.
  func seal(_ record: PendingSeal, in buffer: UnsafeMutableRawBufferPointer) throws(LogError) {
    guard let key = ring?.key(id: record.keyID) else {
      throw .invalidEntry(reason: "no key \(EncryptionKey.text(record.keyID)) in the key ring to seal entry \(record.seq)")
    }
    let header = UnsafeRawBufferPointer(rebasing: buffer[record.headerStart..<record.bodyStart])
    let body = UnsafeRawBufferPointer(rebasing: buffer[record.bodyStart..<(record.bodyStart + record.bodyCount)])
    let nonce = UnsafeRawBufferPointer(rebasing: buffer[record.nonceAt..<(record.nonceAt + Self.nonceSize)])
    do {
      let box = try withAssociatedData(Self.entryContext, seq: record.seq, header: header) { aad in
        Result { try AES.GCM.seal(body, using: key.key, nonce: try AES.GCM.Nonce(data: nonce), authenticating: aad) }
      }.get()
      guard box.ciphertext.count == record.bodyCount else {
        throw LogError.invalidEntry(reason: "\(box.ciphertext.count) sealed bytes for a body of \(record.bodyCount)")
      }
      // The ciphertext takes the plaintext's place, the tag the room after it.
      box.ciphertext.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: buffer[record.bodyStart...]))
      box.tag.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: buffer[(record.bodyStart + record.bodyCount)...]))
    } catch {
      throw .invalidEntry(reason: "AES-GCM sealing of entry \(record.seq) failed with \(key): \(error)")
    }
  }

  /// The room a tag takes, appended before it is written.
  static let emptyTag = [UInt8](repeating: 0, count: tagSize)

  /// Decrypts a sealed part: `header` is the clear header the associated data covers.
  func open(
    keyID: UInt32, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
    context: [UInt8], seq: UInt64?, header: UnsafeRawBufferPointer
  ) throws(Failure) -> [UInt8] {
    var opened: Result<Void, Failure> = .success(())
    let plain = [UInt8](unsafeUninitializedCapacity: max(ciphertext.count, 1)) { out, count in
      opened = Result { () throws(Failure) in
        try open(
          keyID: keyID, nonce: nonce, ciphertext: ciphertext, tag: tag, context: context, seq: seq, header: header,
          into: UnsafeMutableRawBufferPointer(out))
      }
      // Nothing of a record that did not open is kept.
      if case .failure = opened { out.initialize(repeating: 0) }
      count = ciphertext.count
    }
    try opened.get()
    return plain
  }

  /// Decrypts a sealed part into `out`, whose first `ciphertext.count` bytes receive the plaintext
  /// (and nothing readable when the tag does not match): the form a scan uses, opening every
  /// record into one buffer it reuses.
  func open(
    keyID: UInt32, nonce: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
    context: [UInt8], seq: UInt64?, header: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
  ) throws(Failure) {
    guard let key = ring?.key(id: keyID) else { throw .missingKey(keyID) }
    guard nonce.count == Self.nonceSize, tag.count == Self.tagSize, out.count >= ciphertext.count else {
      throw .rejected(keyID)
    }
    do {
      let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
      let plain = try withAssociatedData(context, seq: seq, header: header) { aad in
        Result { try AES.GCM.open(box, using: key.key, authenticating: aad) }
      }.get()
      plain.copyBytes(to: out)
    } catch {
      throw .rejected(keyID)
    }
  }
}
