import Foundation

/// The byte layout of encrypted entries (layout 2). `docs/log-format.md`, *Encrypted records*, is
/// the specification.
///
/// ```
/// offset  size  field
///  0       1    entry layout version (2)
///  1       1    kind
///  2       1    codec
///  3       1    flags
///  4       4    schema version            u32 BE
///  8       8    timestamp, µs since 1970  i64 BE
/// 16       4    key identifier            u32 BE
/// 20      12    nonce
/// 32       2    clear type name length T  u16 BE (0 when the type name is sealed)
/// 34       T    clear type name, UTF-8
/// 34+T     4    ciphertext length C       u32 BE
/// 38+T     C    AES-256-GCM ciphertext of the sealed body
///         16    GCM tag
/// end-32  32    chain hash = SHA-256(previous hash ‖ seq u64 BE ‖ all bytes above)
///
/// sealed body: sealed type name length T' u16 BE, metadata pair count M u16 BE, payload length
/// P u32 BE, sealed type name (T' bytes), M metadata pairs as in layout 1, payload (P bytes).
/// associated data: "chronicle-entry" ‖ log id (16) ‖ seq u64 BE ‖ bytes 0 ..< 38+T of the value.
/// ```
extension EntryFormat {
  /// The clear header's size before the type name.
  static let sealedHeaderSize = 34

  /// Appends the body (everything but the hash) of `entry`, sealed with `ring`'s newest key, for
  /// entry `seq` of the log `cipher` belongs to.
  static func encodeSealedBody(
    _ entry: NewEntry, timestamp: Int64, seq: UInt64, cipher: RecordCipher, ring: KeyRing,
    into writer: inout ByteWriter
  ) throws(LogError) {
    try checkLimits(entry)
    let sealName = ring.sealsTypeNames
    let typeName = Array(entry.typeName.utf8)
    var inner = ByteWriter(capacity: 8 + typeName.count + entry.payload.count + 64 * entry.metadata.count)
    inner.append(bigEndian: UInt16(sealName ? typeName.count : 0))
    inner.append(bigEndian: UInt16(entry.metadata.count))
    inner.append(bigEndian: UInt32(entry.payload.count))
    if sealName { inner.append(typeName) }
    try appendMetadata(entry.metadata, into: &inner)
    inner.append(entry.payload)
    guard inner.bytes.count <= Int(UInt32.max) else {
      throw .invalidEntry(reason: "the sealed body of '\(entry.typeName)' is larger than 4 GiB")
    }
    let key = ring.current
    let nonce = RecordCipher.nonce()
    let start = writer.bytes.count
    writer.append(sealedLayoutVersion)
    writer.append(entry.kind.rawValue)
    writer.append(entry.codec.rawValue)
    writer.append(entry.flags.rawValue)
    writer.append(bigEndian: entry.schemaVersion)
    writer.append(bigEndian: timestamp)
    writer.append(bigEndian: key.id)
    writer.append(nonce)
    writer.append(bigEndian: UInt16(sealName ? 0 : typeName.count))
    if !sealName { writer.append(typeName) }
    writer.append(bigEndian: UInt32(inner.bytes.count))
    try cipher.seal(
      inner.bytes, key: key, nonce: nonce, context: RecordCipher.entryContext, seq: seq, headerStart: start,
      into: &writer)
  }

  /// Parses the clear part of an encrypted entry (layout 2): what anyone can read without the key.
  static func parseSealed(_ value: UnsafeRawBufferPointer, seq: UInt64) throws(FormatError) -> EntryView {
    var reader = ByteReader(UnsafeRawBufferPointer(rebasing: value[..<(value.count - hashSize)]))
    _ = try reader.integer(UInt8.self, "layout version")
    let kindByte = try reader.integer(UInt8.self, "kind")
    guard let kind = EntryKind(rawValue: kindByte) else { throw FormatError("unknown kind \(kindByte)") }
    let codecByte = try reader.integer(UInt8.self, "codec")
    guard let codec = PayloadCodec(rawValue: codecByte) else { throw FormatError("unknown codec \(codecByte)") }
    let flags = EntryFlags(rawValue: try reader.integer(UInt8.self, "flags"))
    let schemaVersion = try reader.integer(UInt32.self, "schema version")
    let timestamp = try reader.integer(Int64.self, "timestamp")
    let keyID = try reader.integer(UInt32.self, "key identifier")
    let nonce = try reader.bytes(RecordCipher.nonceSize, "nonce")
    let typeName = try reader.bytes(Int(try reader.integer(UInt16.self, "type name length")), "type name")
    let cipherCount = Int(try reader.integer(UInt32.self, "ciphertext length"))
    let header = UnsafeRawBufferPointer(rebasing: reader.buffer[..<reader.offset])
    let ciphertext = try reader.bytes(cipherCount, "ciphertext")
    let tag = try reader.bytes(RecordCipher.tagSize, "tag")
    guard reader.remaining == 0 else {
      throw FormatError("\(reader.remaining) unexpected bytes between the tag and the hash")
    }
    return EntryView(
      seq: seq, kind: kind, flags: flags, codec: codec, schemaVersion: schemaVersion, timestamp: timestamp,
      typeNameBytes: typeName, metadataBytes: UnsafeRawBufferPointer(start: nil, count: 0), metadataCount: 0,
      payload: UnsafeRawBufferPointer(start: nil, count: 0), body: reader.buffer,
      hash: UnsafeRawBufferPointer(rebasing: value[(value.count - hashSize)...]),
      sealed: SealedPart(keyID: keyID, nonce: nonce, header: header, ciphertext: ciphertext, tag: tag))
  }

  /// The view of `sealed` with its type name, metadata and payload read from `plaintext` (its
  /// decrypted body), which must outlive the returned view.
  static func opened(_ sealed: EntryView, plaintext: UnsafeRawBufferPointer) throws(FormatError) -> EntryView {
    var reader = ByteReader(plaintext)
    let typeNameCount = Int(try reader.integer(UInt16.self, "sealed type name length"))
    let metadataCount = Int(try reader.integer(UInt16.self, "metadata count"))
    let payloadCount = Int(try reader.integer(UInt32.self, "payload length"))
    let sealedName = try reader.bytes(typeNameCount, "sealed type name")
    guard sealedName.isEmpty || sealed.typeNameBytes.isEmpty else {
      throw FormatError("a type name both in the clear and sealed")
    }
    let metadata = try readMetadata(&reader, count: metadataCount)
    let payload = try reader.bytes(payloadCount, "payload")
    guard reader.remaining == 0 else {
      throw FormatError("\(reader.remaining) unexpected bytes after the sealed payload")
    }
    var view = sealed
    view.sealed = nil
    if typeNameCount > 0 { view.typeNameBytes = sealedName }
    view.metadataBytes = metadata
    view.metadataCount = metadataCount
    view.payload = payload
    return view
  }
}
