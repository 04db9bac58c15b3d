// MARK: - An entry from its stored bytes

extension StoredEntry {
  /// Decodes entry `seq` from its stored value (its bytes exactly as the `entries` database holds
  /// them, as ``ActionLog/storedValue(seq:)`` returns them): what an auditor does with an entry
  /// handed over with an inclusion proof, without the log.
  ///
  /// ```swift
  /// let entry = try StoredEntry(seq: 5, storedValue: value)
  /// let leaf = MerkleHash.leaf(seq: 5, value: value)   // what the proof starts from
  /// ```
  ///
  /// - Throws: ``LogError/invalidEntry(reason:)`` naming the sequence number and what violates
  ///   the format (docs/log-format.md §3).
  public init(seq: UInt64, storedValue: [UInt8]) throws {
    do {
      self = try storedValue.withUnsafeBytes { try EntryFormat.storedEntry(seq: seq, value: $0) }
    } catch {
      throw LogError.invalidEntry(reason: "the stored value of entry \(seq) is malformed: \(error)")
    }
  }
}
