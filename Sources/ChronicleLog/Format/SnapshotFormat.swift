import Crypto
import Foundation

/// The byte layout of snapshot values (format 1). `docs/log-format.md` is the specification.
///
/// ```
/// offset size  field
///  0      1    snapshot layout version (1)
///  1      1    codec
///  2      2    reserved, zero
///  4      4    state schema version      u32 BE
///  8      8    seq                       u64 BE (equals the key)
/// 16      8    timestamp, µs since 1970  i64 BE
/// 24     32    chain hash at seq
/// 56      4    state length S            u32 BE
/// 60      S    state
///         4    auxiliary length A        u32 BE
///         A    auxiliary
/// end-32 32    SHA-256 of all bytes above
/// ```
///
/// An encrypted log's snapshots have layout 2: the same first 56 bytes, then
///
/// ```
/// 56      4    key identifier            u32 BE
/// 60     12    nonce
/// 72      4    ciphertext length C       u32 BE
/// 76      C    AES-256-GCM ciphertext of: state length S u32 BE, state, auxiliary length A u32 BE, auxiliary
///        16    GCM tag
/// end-32 32    SHA-256 of all bytes above
/// ```
/// with the associated data "chronicle-snapshot" ‖ log id (16) ‖ bytes 0 ..< 76 of the value.
enum SnapshotFormat {
  static let layoutVersion: UInt8 = 1
  /// The layout of encrypted snapshots.
  static let sealedLayoutVersion: UInt8 = 2
  /// The clear header of an encrypted snapshot, up to its ciphertext.
  static let sealedHeaderSize = 76

  /// The stored value of `snapshot`, sealed with the ring's newest key when `cipher` has a ring.
  static func encode(_ snapshot: Snapshot, cipher: RecordCipher?) throws(LogError) -> [UInt8] {
    guard let cipher, let ring = cipher.ring else { return try encode(snapshot) }
    guard snapshot.state.count <= Int(UInt32.max) - 8 - snapshot.auxiliary.count else {
      throw .invalidEntry(reason: "snapshot at \(snapshot.seq) is larger than 4 GiB")
    }
    guard snapshot.chainHash.count == 32 else {
      throw .invalidEntry(reason: "snapshot at \(snapshot.seq) has a chain hash of \(snapshot.chainHash.count) bytes")
    }
    var inner = ByteWriter(capacity: 8 + snapshot.state.count + snapshot.auxiliary.count)
    inner.append(bigEndian: UInt32(snapshot.state.count))
    inner.append(snapshot.state)
    inner.append(bigEndian: UInt32(snapshot.auxiliary.count))
    inner.append(snapshot.auxiliary)
    let key = ring.current
    let nonce = RecordCipher.nonce()
    var writer = ByteWriter(capacity: 140 + inner.bytes.count)
    writer.append(sealedLayoutVersion)
    writer.append(snapshot.codec.rawValue)
    writer.append(bigEndian: UInt16(0))
    writer.append(bigEndian: snapshot.schemaVersion)
    writer.append(bigEndian: snapshot.seq)
    writer.append(bigEndian: snapshot.timestamp)
    writer.append(snapshot.chainHash)
    writer.append(bigEndian: key.id)
    writer.append(nonce)
    writer.append(bigEndian: UInt32(inner.bytes.count))
    try cipher.seal(
      inner.bytes, key: key, nonce: nonce, context: RecordCipher.snapshotContext, seq: nil, headerStart: 0,
      into: &writer)
    writer.append(Array(SHA256.hash(data: writer.bytes)))
    return writer.bytes
  }

  static func encode(_ snapshot: Snapshot) throws(LogError) -> [UInt8] {
    guard snapshot.state.count <= Int(UInt32.max), snapshot.auxiliary.count <= Int(UInt32.max) else {
      throw .invalidEntry(reason: "snapshot at \(snapshot.seq) is larger than 4 GiB")
    }
    guard snapshot.chainHash.count == 32 else {
      throw .invalidEntry(reason: "snapshot at \(snapshot.seq) has a chain hash of \(snapshot.chainHash.count) bytes")
    }
    var writer = ByteWriter(capacity: 100 + snapshot.state.count + snapshot.auxiliary.count)
    writer.append(layoutVersion)
    writer.append(snapshot.codec.rawValue)
    writer.append(bigEndian: UInt16(0))
    writer.append(bigEndian: snapshot.schemaVersion)
    writer.append(bigEndian: snapshot.seq)
    writer.append(bigEndian: snapshot.timestamp)
    writer.append(snapshot.chainHash)
    writer.append(bigEndian: UInt32(snapshot.state.count))
    writer.append(snapshot.state)
    writer.append(bigEndian: UInt32(snapshot.auxiliary.count))
    writer.append(snapshot.auxiliary)
    writer.append(Array(SHA256.hash(data: writer.bytes)))
    return writer.bytes
  }

  /// Parses and checks a stored value; `seq` is the key it was stored under.
  ///
  /// An encrypted snapshot (layout 2) is opened with `cipher`; with `sealedAsEmpty`, one is checked
  /// up to its ciphertext and returned with an empty state (what `verify()` needs without a key).
  static func decode(
    seq: UInt64, value: UnsafeRawBufferPointer, cipher: RecordCipher? = nil, sealedAsEmpty: Bool = false
  ) throws(FormatError) -> Snapshot {
    guard value.count >= 60 + 4 + 32 else { throw FormatError("value of \(value.count) bytes is too short") }
    let body = UnsafeRawBufferPointer(rebasing: value[..<(value.count - 32)])
    guard SHA256.hash(data: body).elementsEqual(value[(value.count - 32)...]) else {
      throw FormatError("checksum mismatch: the stored bytes were changed")
    }
    var reader = ByteReader(body)
    let version = try reader.integer(UInt8.self, "layout version")
    guard version == layoutVersion || version == sealedLayoutVersion else {
      throw FormatError("unknown snapshot layout version \(version)")
    }
    let codecByte = try reader.integer(UInt8.self, "codec")
    guard let codec = PayloadCodec(rawValue: codecByte) else { throw FormatError("unknown codec \(codecByte)") }
    _ = try reader.integer(UInt16.self, "reserved")
    let schemaVersion = try reader.integer(UInt32.self, "schema version")
    let storedSeq = try reader.integer(UInt64.self, "seq")
    guard storedSeq == seq else { throw FormatError("records seq \(storedSeq) but is stored under \(seq)") }
    let timestamp = try reader.integer(Int64.self, "timestamp")
    let chainHash = Array(try reader.bytes(32, "chain hash"))
    if version == sealedLayoutVersion {
      let keyID = try reader.integer(UInt32.self, "key identifier")
      let nonce = try reader.bytes(RecordCipher.nonceSize, "nonce")
      let cipherCount = Int(try reader.integer(UInt32.self, "ciphertext length"))
      let header = UnsafeRawBufferPointer(rebasing: body[..<reader.offset])
      let ciphertext = try reader.bytes(cipherCount, "ciphertext")
      let tag = try reader.bytes(RecordCipher.tagSize, "tag")
      guard reader.remaining == 0 else { throw FormatError("\(reader.remaining) unexpected trailing bytes") }
      var snapshot = Snapshot(
        seq: seq, timestamp: timestamp, codec: codec, schemaVersion: schemaVersion, chainHash: chainHash,
        state: [], auxiliary: [])
      if sealedAsEmpty { return snapshot }
      guard let cipher else {
        throw FormatError("encrypted (layout 2) in a log of format 1")
      }
      let plaintext: [UInt8]
      do {
        plaintext = try cipher.open(
          keyID: keyID, nonce: nonce, ciphertext: ciphertext, tag: tag, context: RecordCipher.snapshotContext,
          seq: nil, header: header)
      } catch {
        switch error {
        case .missingKey(let id):
          throw FormatError("encrypted with key \(EncryptionKey.text(id)), which the key ring does not hold", sealed: error)
        case .rejected(let id):
          throw FormatError(
            "does not decrypt with key \(EncryptionKey.text(id)): changed, moved, or another key", sealed: error)
        }
      }
      let inner = plaintext.withUnsafeBytes { buffer in
        Result { () throws(FormatError) -> ([UInt8], [UInt8]) in
          var inner = ByteReader(buffer)
          let state = Array(try inner.bytes(Int(try inner.integer(UInt32.self, "state length")), "state"))
          let auxiliary = Array(try inner.bytes(Int(try inner.integer(UInt32.self, "auxiliary length")), "auxiliary"))
          guard inner.remaining == 0 else { throw FormatError("\(inner.remaining) unexpected trailing bytes") }
          return (state, auxiliary)
        }
      }
      (snapshot.state, snapshot.auxiliary) = try inner.get()
      return snapshot
    }
    if cipher != nil, !sealedAsEmpty { throw FormatError("stored in the clear (layout 1) in an encrypted log") }
    let state = Array(try reader.bytes(Int(try reader.integer(UInt32.self, "state length")), "state"))
    let auxiliary = Array(try reader.bytes(Int(try reader.integer(UInt32.self, "auxiliary length")), "auxiliary"))
    guard reader.remaining == 0 else { throw FormatError("\(reader.remaining) unexpected trailing bytes") }
    return Snapshot(
      seq: seq, timestamp: timestamp, codec: codec, schemaVersion: schemaVersion, chainHash: chainHash,
      state: state, auxiliary: auxiliary)
  }
}
