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
    let pending = try encodeUnsealedBody(
      entry, timestamp: timestamp, seq: seq, key: ring.current, sealsTypeName: ring.sealsTypeNames, into: &writer)
    let sealed = writer.bytes.withUnsafeMutableBytes { buffer in
      Result { () throws(LogError) in try cipher.seal(pending, in: buffer) }
    }
    try sealed.get()
  }

  /// Appends the body of `entry` as ``encodeSealedBody(_:timestamp:seq:cipher:ring:into:)`` does
  /// with `key` (the ring's newest) and the type name sealed when `sealsTypeName`, except that the
  /// sealed body is still in the clear, followed by room for its tag: the returned
  /// ``RecordCipher/PendingSeal`` seals it where it stands. A batch seals all its entries this way
  /// once they are encoded, with no copy of their bodies.
  static func encodeUnsealedBody(
    _ entry: NewEntry, timestamp: Int64, seq: UInt64, key: borrowing EncryptionKey, sealsTypeName: Bool,
    into writer: inout ByteWriter
  ) throws(LogError) -> RecordCipher.PendingSeal {
    try checkLimits(entry)
    let typeNameCount = entry.typeName.utf8.count
    let start = writer.bytes.count
    // The clear header before the type name, on the stack and appended at once.
    withUnsafeTemporaryAllocation(byteCount: sealedHeaderSize, alignment: 8) { header in
      writeLeadingFields(of: entry, layout: sealedLayoutVersion, timestamp: timestamp, into: header)
      header.storeBytes(of: key.id.bigEndian, toByteOffset: 16, as: UInt32.self)
      NonceSource.write(to: header.baseAddress! + 20)
      header.storeBytes(of: UInt16(sealsTypeName ? 0 : typeNameCount).bigEndian, toByteOffset: 32, as: UInt16.self)
      writer.bytes.append(contentsOf: UnsafeRawBufferPointer(header))
    }
    if !sealsTypeName { writer.append(utf8: entry.typeName) }
    let lengthAt = writer.bytes.count
    let bodyStart = lengthAt + 4
    // The ciphertext length (written once the body is) and the sealed body's own header.
    withUnsafeTemporaryAllocation(byteCount: 12, alignment: 8) { lengths in
      lengths.storeBytes(of: UInt32(0), toByteOffset: 0, as: UInt32.self)
      lengths.storeBytes(of: UInt16(sealsTypeName ? typeNameCount : 0).bigEndian, toByteOffset: 4, as: UInt16.self)
      lengths.storeBytes(of: UInt16(entry.metadata.count).bigEndian, toByteOffset: 6, as: UInt16.self)
      lengths.storeBytes(of: UInt32(entry.payload.count).bigEndian, toByteOffset: 8, as: UInt32.self)
      writer.bytes.append(contentsOf: UnsafeRawBufferPointer(lengths))
    }
    if sealsTypeName { writer.append(utf8: entry.typeName) }
    do { try appendMetadata(entry.metadata, into: &writer) } catch {
      writer.bytes.removeSubrange(start...)
      throw error
    }
    writer.append(entry.payload)
    let bodyCount = writer.bytes.count - bodyStart
    guard bodyCount <= Int(UInt32.max) else {
      writer.bytes.removeSubrange(start...)
      throw .invalidEntry(reason: "the sealed body of '\(entry.typeName)' is larger than 4 GiB")
    }
    writer.bytes.withUnsafeMutableBytes { all in
      all.storeBytes(of: UInt32(bodyCount).bigEndian, toByteOffset: lengthAt, as: UInt32.self)
    }
    writer.append(RecordCipher.emptyTag)
    return RecordCipher.PendingSeal(
      keyID: key.id, seq: seq, headerStart: start, nonceAt: start + 20, bodyStart: bodyStart,
      bodyCount: bodyCount)
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
