/// One stored entry as its bytes say it, parsed but not copied: every field points into the value
/// LMDB handed out, so a view is valid only inside the read (the ``ActionLog/scan(in:_:)`` closure,
/// the transaction) that produced it. The engine's replay, verification, export and salvage read
/// entries this way; ``StoredEntry`` is the copied, owned form.
@usableFromInline package struct EntryView {
  /// The sequence number.
  @usableFromInline package var seq: UInt64
  /// The kind.
  @usableFromInline package var kind: EntryKind
  /// The flags.
  @usableFromInline package var flags: EntryFlags
  /// The payload's codec.
  @usableFromInline package var codec: PayloadCodec
  /// The action schema version.
  @usableFromInline package var schemaVersion: UInt32
  /// µs since 1970.
  package var timestamp: Int64
  /// The type name's UTF-8 bytes.
  package var typeNameBytes: UnsafeRawBufferPointer
  /// The metadata pairs' bytes (see `docs/log-format.md`) and their count.
  var metadataBytes: UnsafeRawBufferPointer
  var metadataCount: Int
  /// The payload bytes.
  @usableFromInline package var payload: UnsafeRawBufferPointer
  /// Everything the hash covers after the previous hash and the sequence number: the value without its hash.
  package var body: UnsafeRawBufferPointer
  /// The stored chain hash (32 bytes).
  package var hash: UnsafeRawBufferPointer
  /// The encrypted part of an entry of layout 2 that was not opened (`nil` for layout 1 and for an
  /// opened entry, whose type name, metadata and payload point into its plaintext).
  var sealed: SealedPart? = nil

  /// The key identifier of a sealed entry (`nil` when the entry is in the clear or was opened).
  package var sealedKeyID: UInt32? { sealed?.keyID }

  /// The type name (invalid UTF-8 is repaired, since this is for messages).
  @usableFromInline package var typeName: String { String(decoding: typeNameBytes, as: UTF8.self) }

  /// The audit metadata (parsed on demand; the layout was checked by ``EntryFormat/parse(_:seq:)``).
  package var metadata: [String: String] {
    guard metadataCount > 0 else { return [:] }
    var reader = ByteReader(metadataBytes)
    var metadata: [String: String] = [:]
    for _ in 0..<metadataCount {
      guard let keyCount = try? reader.integer(UInt16.self, "metadata key length"),
        let key = try? reader.bytes(Int(keyCount), "metadata key"),
        let valueCount = try? reader.integer(UInt32.self, "metadata value length"),
        let value = try? reader.bytes(Int(valueCount), "metadata value")
      else { break }
      metadata[String(decoding: key, as: UTF8.self)] = String(decoding: value, as: UTF8.self)
    }
    return metadata
  }

  /// Parses `value`, an entry's stored bytes (its body followed by its 32-byte hash), as entry
  /// `seq`, checking every length and enumerated byte; the view points into `value`. A sealed
  /// entry is not opened.
  ///
  /// - Throws: an error whose description says what in the bytes is wrong.
  package static func parse(storedValue value: UnsafeRawBufferPointer, seq: UInt64) throws -> EntryView {
    try EntryFormat.parse(value, seq: seq)
  }
}

/// The encrypted part of an entry of layout 2 (`docs/log-format.md`, *Encrypted records*), pointing
/// into the stored value.
struct SealedPart {
  /// The identifier of the key that sealed it.
  var keyID: UInt32
  /// The 12-byte nonce.
  var nonce: UnsafeRawBufferPointer
  /// The clear header the associated data covers: the value's bytes before the ciphertext.
  var header: UnsafeRawBufferPointer
  /// The ciphertext, as long as the plaintext.
  var ciphertext: UnsafeRawBufferPointer
  /// The 16-byte GCM tag.
  var tag: UnsafeRawBufferPointer
}
