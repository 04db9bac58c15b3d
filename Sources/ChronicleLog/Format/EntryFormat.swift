import Crypto
import Foundation

/// The byte layout of entry values (format 1). `docs/log-format.md` is the specification.
///
/// ```
/// offset size  field
///  0      1    entry layout version (1)
///  1      1    kind
///  2      1    codec
///  3      1    flags
///  4      4    schema version            u32 BE
///  8      8    timestamp, µs since 1970  i64 BE
/// 16      2    type name length T        u16 BE
/// 18      2    metadata pair count M     u16 BE
/// 20      4    payload length P          u32 BE
/// 24      T    type name, UTF-8
///   M times:   key length u16 BE, key UTF-8, value length u32 BE, value UTF-8 (keys sorted bytewise, unique)
///         P    payload
/// end-32 32    chain hash = SHA-256(previous hash ‖ seq u64 BE ‖ all bytes above)
/// ```
///
/// Entries of an encrypted log have layout 2 (see `EntryFormat+Sealed.swift`).
enum EntryFormat {
  static let layoutVersion: UInt8 = 1
  /// The layout of encrypted entries.
  static let sealedLayoutVersion: UInt8 = 2
  static let fixedHeaderSize = 24
  static let hashSize = 32

  /// Appends the body (everything but the hash) of `entry` to `writer`.
  static func encodeBody(_ entry: NewEntry, timestamp: Int64, into writer: inout ByteWriter) throws(LogError) {
    try checkLimits(entry)
    // The fixed header is built on the stack and appended at once: one append, not nine.
    withUnsafeTemporaryAllocation(byteCount: fixedHeaderSize, alignment: 8) { header in
      writeLeadingFields(of: entry, layout: layoutVersion, timestamp: timestamp, into: header)
      header.storeBytes(of: UInt16(entry.typeName.utf8.count).bigEndian, toByteOffset: 16, as: UInt16.self)
      header.storeBytes(of: UInt16(entry.metadata.count).bigEndian, toByteOffset: 18, as: UInt16.self)
      header.storeBytes(of: UInt32(entry.payload.count).bigEndian, toByteOffset: 20, as: UInt32.self)
      writer.bytes.append(contentsOf: UnsafeRawBufferPointer(header))
    }
    writer.append(utf8: entry.typeName)
    try appendMetadata(entry.metadata, into: &writer)
    writer.append(entry.payload)
  }

  /// Writes the 16 bytes both layouts start with (layout version, kind, codec, flags, schema
  /// version, timestamp) at the start of `header`.
  @inline(__always)
  static func writeLeadingFields(
    of entry: NewEntry, layout: UInt8, timestamp: Int64, into header: UnsafeMutableRawBufferPointer
  ) {
    header[0] = layout
    header[1] = entry.kind.rawValue
    header[2] = entry.codec.rawValue
    header[3] = entry.flags.rawValue
    header.storeBytes(of: entry.schemaVersion.bigEndian, toByteOffset: 4, as: UInt32.self)
    header.storeBytes(of: timestamp.bigEndian, toByteOffset: 8, as: Int64.self)
  }

  /// Throws ``LogError/invalidEntry(reason:)`` when a field of `entry` does not fit its length field.
  static func checkLimits(_ entry: NewEntry) throws(LogError) {
    let typeNameCount = entry.typeName.utf8.count
    guard typeNameCount <= Int(UInt16.max) else {
      throw .invalidEntry(reason: "type name of \(typeNameCount) bytes (at most 65,535): '\(entry.typeName.prefix(40))…'")
    }
    guard entry.metadata.count <= Int(UInt16.max) else {
      throw .invalidEntry(reason: "\(entry.metadata.count) metadata pairs (at most 65,535) for '\(entry.typeName)'")
    }
    guard entry.payload.count <= Int(UInt32.max) else {
      throw .invalidEntry(reason: "payload of \(entry.payload.count) bytes for '\(entry.typeName)' (at most 4 GiB)")
    }
  }

  /// Appends the metadata pairs, keys sorted bytewise.
  static func appendMetadata(_ metadata: [String: String], into writer: inout ByteWriter) throws(LogError) {
    guard !metadata.isEmpty else { return }
    for (key, value) in sortedMetadata(metadata) {
      guard key.count <= Int(UInt16.max), value.count <= Int(UInt32.max) else {
        throw .invalidEntry(reason: "metadata key '\(String(decoding: key.prefix(40), as: UTF8.self))' is too long")
      }
      writer.append(bigEndian: UInt16(key.count))
      writer.append(key)
      writer.append(bigEndian: UInt32(value.count))
      writer.append(value)
    }
  }

  private static func sortedMetadata(_ metadata: [String: String]) -> [([UInt8], [UInt8])] {
    metadata.map { (Array($0.key.utf8), Array($0.value.utf8)) }
      .sorted { $0.0.lexicographicallyPrecedes($1.0) }
  }

  /// Parses the stored value of entry `seq`, checking every length and enumerated byte.
  static func parse(_ value: UnsafeRawBufferPointer, seq: UInt64) throws(FormatError) -> EntryView {
    guard value.count >= fixedHeaderSize + hashSize else {
      throw FormatError("value of \(value.count) bytes is shorter than the \(fixedHeaderSize + hashSize)-byte minimum")
    }
    var reader = ByteReader(UnsafeRawBufferPointer(rebasing: value[..<(value.count - hashSize)]))
    let version = try reader.integer(UInt8.self, "layout version")
    if version == sealedLayoutVersion { return try parseSealed(value, seq: seq) }
    guard version == layoutVersion else { throw FormatError("unknown entry layout version \(version)") }
    let kindByte = try reader.integer(UInt8.self, "kind")
    guard let kind = EntryKind(rawValue: kindByte) else { throw FormatError("unknown kind \(kindByte)") }
    let codecByte = try reader.integer(UInt8.self, "codec")
    guard let codec = PayloadCodec(rawValue: codecByte) else { throw FormatError("unknown codec \(codecByte)") }
    let flags = EntryFlags(rawValue: try reader.integer(UInt8.self, "flags"))
    let schemaVersion = try reader.integer(UInt32.self, "schema version")
    let timestamp = try reader.integer(Int64.self, "timestamp")
    let typeNameCount = Int(try reader.integer(UInt16.self, "type name length"))
    let metadataCount = Int(try reader.integer(UInt16.self, "metadata count"))
    let payloadCount = Int(try reader.integer(UInt32.self, "payload length"))
    let typeName = try reader.bytes(typeNameCount, "type name")
    let metadata = try readMetadata(&reader, count: metadataCount)
    let payload = try reader.bytes(payloadCount, "payload")
    guard reader.remaining == 0 else {
      throw FormatError("\(reader.remaining) unexpected bytes between the payload and the hash")
    }
    return EntryView(
      seq: seq, kind: kind, flags: flags, codec: codec, schemaVersion: schemaVersion, timestamp: timestamp,
      typeNameBytes: typeName, metadataBytes: metadata, metadataCount: metadataCount, payload: payload,
      body: reader.buffer, hash: UnsafeRawBufferPointer(rebasing: value[(value.count - hashSize)...]))
  }

  /// Reads `count` metadata pairs, checking their lengths and order; returns their bytes.
  static func readMetadata(_ reader: inout ByteReader, count: Int) throws(FormatError) -> UnsafeRawBufferPointer {
    let metadataStart = reader.offset
    var previousKey: UnsafeRawBufferPointer?
    for _ in 0..<count {
      let key = try reader.bytes(Int(try reader.integer(UInt16.self, "metadata key length")), "metadata key")
      _ = try reader.bytes(Int(try reader.integer(UInt32.self, "metadata value length")), "metadata value")
      if let previousKey, !previousKey.lexicographicallyPrecedes(key) {
        throw FormatError("metadata keys not in strictly ascending order")
      }
      previousKey = key
    }
    return UnsafeRawBufferPointer(rebasing: reader.buffer[metadataStart..<reader.offset])
  }

  /// A fully decoded stored entry.
  static func storedEntry(seq: UInt64, value: UnsafeRawBufferPointer) throws(FormatError) -> StoredEntry {
    try storedEntry(try parse(value, seq: seq))
  }

  /// The owned form of a view; a sealed view cannot become one (its content is encrypted).
  static func storedEntry(_ view: EntryView) throws(FormatError) -> StoredEntry {
    if let sealed = view.sealed {
      throw FormatError("encrypted with key \(EncryptionKey.text(sealed.keyID)): a key ring holding it is needed")
    }
    let seq = view.seq
    guard let typeName = String(validating: view.typeNameBytes, as: UTF8.self) else {
      throw FormatError("invalid UTF-8 in the type name")
    }
    var metadata: [String: String] = [:]
    var reader = ByteReader(view.metadataBytes)
    for _ in 0..<view.metadataCount {
      let key = try reader.string(Int(try reader.integer(UInt16.self, "metadata key length")), "metadata key")
      metadata[key] = try reader.string(Int(try reader.integer(UInt32.self, "metadata value length")), "metadata value")
    }
    return StoredEntry(
      seq: seq, timestamp: view.timestamp, kind: view.kind, flags: view.flags, codec: view.codec,
      schemaVersion: view.schemaVersion, typeName: typeName, metadata: metadata, payload: Array(view.payload),
      hash: Array(view.hash))
  }
}
