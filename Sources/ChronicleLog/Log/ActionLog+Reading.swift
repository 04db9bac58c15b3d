import ChronicleLMDB

extension ActionLog {
  /// The entry with sequence number `seq`, or `nil` if the log has none.
  ///
  /// - Throws: ``LogError/corruptEntry(path:seq:reason:)`` if its bytes violate the format.
  public func record(at seq: UInt64) throws -> StoredEntry? {
    try ensureOpen()
    return try storage {
      try environment.read { txn in
        try withSequenceKey(seq) { key in
          try txn.withValue(forKey: key, in: entriesDB) { try decodeRecord(seq: seq, value: $0) }
        }
      }
    }
  }

  /// The entries whose sequence numbers fall in `range`, in order (missing ones are skipped).
  public func records(in range: ClosedRange<UInt64>) throws -> [StoredEntry] {
    try storage {
      var records: [StoredEntry] = []
      try forEach(in: range) { records.append($0) }
      return records
    }
  }

  /// At most `limit` of the entries whose sequence numbers fall in `range`, in ascending order or,
  /// with `reverse`, descending, read in one read transaction: the way to page through a log in
  /// short transactions, whatever the gaps between its sequence numbers.
  public func records(in range: ClosedRange<UInt64>, reverse: Bool, limit: Int) throws -> [StoredEntry] {
    var records: [StoredEntry] = []
    guard limit > 0 else { return records }
    struct Full: Error {}
    try storage {
      do {
        try forEach(in: range, reverse: reverse) { record in
          records.append(record)
          if records.count == limit { throw Full() }
        }
      } catch is Full {}
    }
    return records
  }

  /// Calls `body` with each entry in `range` (all entries for `nil`), in
  /// ascending order or, with `reverse`, descending, inside one read transaction.
  /// Throwing from `body` stops the walk and rethrows.
  public func forEach(
    in range: ClosedRange<UInt64>? = nil, reverse: Bool = false, _ body: (StoredEntry) throws -> Void
  ) throws {
    try ensureOpen()
    let lower = range?.lowerBound ?? 0
    let upper = range?.upperBound ?? .max
    try environment.read { txn in
      try txn.withCursor(on: entriesDB) { cursor in
        var item =
          reverse
          ? try withSequenceKey(upper) { try cursor.seek(atMost: $0) }
          : try withSequenceKey(lower) { try cursor.seek(atLeast: $0) }
        while let (key, value) = item {
          let seq = try decodeKey(key)
          guard seq >= lower, seq <= upper else { break }
          try body(try decodeRecord(seq: seq, value: value))
          item = reverse ? try cursor.previous() : try cursor.next()
        }
      }
    }
  }

  /// The first and last sequence numbers the log holds, or `nil` if it holds none.
  public func bounds() throws -> ClosedRange<UInt64>? {
    try ensureOpen()
    return try storage {
      try environment.read { txn in
        try txn.withCursor(on: entriesDB) { cursor -> ClosedRange<UInt64>? in
          guard let first = try cursor.first()?.key else { return nil }
          let firstSeq = try decodeKey(first)
          let lastSeq = try decodeKey(try cursor.last()!.key)
          return firstSeq...lastSeq
        }
      }
    }
  }

  /// The sequence number of the last entry (or of the anchor, 0 for a new log).
  public var lastSeq: UInt64 {
    get throws { try head().seq }
  }

  /// The number of entries the log holds.
  public func count() throws -> Int {
    try ensureOpen()
    return try storage { try environment.read { try $0.statistics(of: entriesDB).entries } }
  }

  /// The last entry's sequence number and hash: the chain head. An empty log's head is its anchor.
  public func head() throws -> ChainAnchor {
    try ensureOpen()
    if access == .readWrite { return state.withLock { $0.last } }
    return try Self.readHead(environment, entriesDB, meta: try meta(), path: path)
  }

  func decodeKey(_ key: UnsafeRawBufferPointer) throws(LogError) -> UInt64 {
    do { return try sequence(fromKey: key) } catch {
      throw .corruptEntry(path: path, seq: 0, reason: "a key of \(key.count) bytes: \(error)")
    }
  }

  func decodeRecord(seq: UInt64, value: UnsafeRawBufferPointer) throws(LogError) -> StoredEntry {
    let view: EntryView
    do { view = try EntryFormat.parse(value, seq: seq) } catch {
      throw .corruptEntry(path: path, seq: seq, reason: error.description)
    }
    let opened: [UInt8]?
    do { opened = try plaintext(of: view) } catch {
      guard options.returnsSealedEntries, case .keyMissing(_, _, let keyID) = error else { throw error }
      return StoredEntry(
        seq: seq, timestamp: view.timestamp, kind: view.kind, flags: view.flags, codec: view.codec,
        schemaVersion: view.schemaVersion, typeName: view.typeName, metadata: [:], payload: [],
        hash: Array(view.hash), sealedKeyID: keyID)
    }
    guard let plaintext = opened else {
      do { return try EntryFormat.storedEntry(view) } catch {
        throw .corruptEntry(path: path, seq: seq, reason: error.description)
      }
    }
    let entry = plaintext.withUnsafeBytes { buffer in
      Result { () throws(FormatError) in try EntryFormat.storedEntry(try EntryFormat.opened(view, plaintext: buffer)) }
    }
    do { return try entry.get() } catch {
      throw .corruptEntry(path: path, seq: seq, reason: "its decrypted body: \(error.description)")
    }
  }

  /// The decrypted body of a sealed entry, `nil` for an entry in the clear.
  ///
  /// - Throws: ``LogError/keyMissing(path:seq:keyID:)`` and ``LogError/decryptionFailed(path:seq:keyID:)``;
  ///   ``LogError/corruptEntry(path:seq:reason:)`` for an entry in the clear in an encrypted log (or
  ///   an encrypted one in a log in the clear).
  func plaintext(of view: EntryView) throws(LogError) -> [UInt8]? {
    guard let sealed = try Self.checkLayout(view, cipher: cipher, path: path), let cipher else { return nil }
    do {
      return try cipher.open(
        keyID: sealed.keyID, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag,
        context: RecordCipher.entryContext, seq: view.seq, header: sealed.header)
    } catch {
      switch error {
      case .missingKey(let id): throw .keyMissing(path: path, seq: view.seq, keyID: id)
      case .rejected(let id): throw .decryptionFailed(path: path, seq: view.seq, keyID: id)
      }
    }
  }

  /// `view` opened with `cipher`: as it is when in the clear, else with its type name, metadata and
  /// payload read from its decrypted body, written into `memory(count)` (at least `count` bytes,
  /// which must outlive the returned view). The checks and errors of ``plaintext(of:)``.
  static func opened(
    _ view: EntryView, cipher: RecordCipher?, path: String, into memory: (Int) -> UnsafeMutableRawBufferPointer
  ) throws(LogError) -> EntryView {
    guard let sealed = try checkLayout(view, cipher: cipher, path: path), let cipher else { return view }
    let plaintext = memory(sealed.ciphertext.count)
    do {
      try cipher.open(
        keyID: sealed.keyID, nonce: sealed.nonce, ciphertext: sealed.ciphertext, tag: sealed.tag,
        context: RecordCipher.entryContext, seq: view.seq, header: sealed.header, into: plaintext)
    } catch {
      switch error {
      case .missingKey(let id): throw .keyMissing(path: path, seq: view.seq, keyID: id)
      case .rejected(let id): throw .decryptionFailed(path: path, seq: view.seq, keyID: id)
      }
    }
    do {
      return try EntryFormat.opened(
        view, plaintext: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(plaintext)[..<sealed.ciphertext.count]))
    } catch {
      throw .corruptEntry(path: path, seq: view.seq, reason: "its decrypted body: \(error)")
    }
  }

  /// The sealed part of `view`, `nil` for an entry in the clear; throws for an entry in the clear in
  /// an encrypted log (or an encrypted one in a log in the clear).
  static func checkLayout(_ view: EntryView, cipher: RecordCipher?, path: String) throws(LogError) -> SealedPart? {
    guard let sealed = view.sealed else {
      if cipher != nil {
        throw .corruptEntry(path: path, seq: view.seq, reason: "stored in the clear (layout 1) in an encrypted log")
      }
      return nil
    }
    guard cipher != nil else {
      throw .corruptEntry(path: path, seq: view.seq, reason: "encrypted (layout 2) in a log of format 1")
    }
    return sealed
  }

  /// Calls `body` with `view` opened: as it is when in the clear, else with its decrypted body.
  func withOpened<R>(_ view: EntryView, _ body: (EntryView) throws -> R) throws -> R {
    guard let plaintext = try plaintext(of: view) else { return try body(view) }
    return try plaintext.withUnsafeBytes { buffer in
      let opened: EntryView
      do { opened = try EntryFormat.opened(view, plaintext: buffer) } catch {
        throw LogError.corruptEntry(path: path, seq: view.seq, reason: "its decrypted body: \(error)")
      }
      return try body(opened)
    }
  }
}

extension ActionLog {
  /// Entries a scan reads per read transaction: a long scan (a replay with a
  /// slow body) renews its transaction this often, so it never keeps the writer
  /// from reusing freed pages for long.
  static let scanChunk: UInt64 = 4_096

  /// Walks the entries in `range` in order, in read transactions of
  /// ``scanChunk`` entries, parsing each header but copying nothing: the
  /// engine's replay path. Hashes are not checked here (that is
  /// ``verify(progress:)``'s job); the layout is.
  @usableFromInline package func scan(in range: ClosedRange<UInt64>, _ body: (EntryView) throws -> Void) throws {
    try scan(range, opening: { _ in true }, opensAll: true, body)
  }

  /// ``scan(in:_:)`` that decrypts only the sealed entries for which `opening` (given the clear
  /// header: kind, flags, seq) says so; `body` sees the others still sealed (``EntryView/sealed``
  /// set, no payload or metadata). A pass that needs only the clear fields of most entries (the
  /// engine's jump plan reads the payload of undo, redo and restore entries only) skips their
  /// decryption. In a log in the clear it is ``scan(in:_:)``.
  @usableFromInline package func scan(
    in range: ClosedRange<UInt64>, opening: (EntryView) -> Bool, _ body: (EntryView) throws -> Void
  ) throws {
    try scan(range, opening: opening, opensAll: false, body)
  }

  /// Entries `range` as stored, never opened (a sealed entry's view is ``EntryView/sealed``), read
  /// in short read transactions that only copy their stored bytes: `body` runs after they ended,
  /// on views into the copy. A reader doing slow work per entry inside a transaction (the
  /// PostgreSQL shipper renders each payload as JSON) keeps the writer from reusing the pages it
  /// frees for as long as that work takes; the writer's file then grows into new pages, which cost
  /// it more to write. If the read fails part way, `body` sees the entries before the failure,
  /// then the error is thrown, as ``scan(in:opening:_:)`` does.
  package func scanCopied(in range: ClosedRange<UInt64>, _ body: (EntryView) throws -> Void) throws {
    var values: [UInt8] = []
    var ends: [Int] = []
    var failure: (any Error)?
    do {
      try scan(range, opening: { _ in false }, opensAll: false) { view in
        values.append(contentsOf: view.body)
        values.append(contentsOf: view.hash)
        ends.append(values.count)
      }
    } catch {
      failure = error
    }
    try values.withUnsafeBytes { all in
      var start = 0
      for (offset, end) in ends.enumerated() {
        let seq = range.lowerBound + UInt64(offset)
        let view: EntryView
        do { view = try EntryFormat.parse(UnsafeRawBufferPointer(rebasing: all[start..<end]), seq: seq) } catch {
          throw LogError.corruptEntry(path: path, seq: seq, reason: "\(error)")
        }
        try body(view)
        start = end
      }
    }
    if let failure { throw failure }
  }

  /// The scans above; `opensAll` says that `opening` opens every entry.
  private func scan(
    _ range: ClosedRange<UInt64>, opening: (EntryView) -> Bool, opensAll: Bool, _ body: (EntryView) throws -> Void
  ) throws {
    try ensureOpen()
    var lower = range.lowerBound
    while true {
      let upper = range.upperBound - lower >= Self.scanChunk ? lower + Self.scanChunk - 1 : range.upperBound
      try scanInOneTransaction(lower...upper, opening, opensAll: opensAll, body)
      guard upper < range.upperBound else { return }
      lower = upper + 1
    }
  }

  private func scanInOneTransaction(
    _ range: ClosedRange<UInt64>, _ opening: (EntryView) -> Bool, opensAll: Bool, _ body: (EntryView) throws -> Void
  ) throws {
    // The decrypted bodies, each in turn in one buffer (an encrypted log's scan allocates nothing
    // per entry for them).
    var buffer = OpeningBuffer()
    try environment.read { txn in
      try txn.withCursor(on: entriesDB) { cursor in
        var item = try withSequenceKey(range.lowerBound) { try cursor.seek(atLeast: $0) }
        var expected = range.lowerBound
        while let (key, value) = item {
          guard let entry = try scanned(key, value, expected: expected, through: range.upperBound) else { break }
          let seq = entry.seq
          if entry.sealed != nil, cipher != nil, !opensAll, !opening(entry) {
            try body(entry)
          } else {
            try body(try Self.opened(entry, cipher: cipher, path: path) { buffer.reserve($0) })
          }
          expected = seq + 1
          item = try cursor.next()
        }
        if expected <= range.upperBound {
          throw LogError.noSuchEntry(path: path, seq: expected)
        }
      }
    }
  }

  /// The sequence number of the entry a scan's cursor is on, or `nil` when it is past `upper`;
  /// throws when it is not entry `expected` (one is missing).
  func scannedSeq(_ key: UnsafeRawBufferPointer, expected: UInt64, through upper: UInt64) throws(LogError) -> UInt64? {
    let seq = try decodeKey(key)
    guard seq <= upper else { return nil }
    guard seq == expected else {
      throw .corruptEntry(path: path, seq: expected, reason: "missing: the next entry found is \(seq)")
    }
    return seq
  }

  /// The entry a scan's cursor is on, parsed, or `nil` when it is past `upper`; throws when it is
  /// not entry `expected` (one is missing) or its layout is bad.
  func scanned(
    _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, expected: UInt64, through upper: UInt64
  ) throws(LogError) -> EntryView? {
    guard let seq = try scannedSeq(key, expected: expected, through: upper) else { return nil }
    do { return try EntryFormat.parse(value, seq: seq) } catch {
      throw .corruptEntry(path: path, seq: seq, reason: "\(error)")
    }
  }
}

// MARK: - Opening buffer

/// The memory a scan decrypts its entries' bodies into, one at a time: grown to the largest body
/// met, reused for the next entry, freed with the scan.
struct OpeningBuffer: ~Copyable {
  private var storage: UnsafeMutableRawBufferPointer

  init() { storage = .allocate(byteCount: 512, alignment: 16) }

  /// At least `count` bytes (at least one); what an earlier call returned is no longer valid.
  mutating func reserve(_ count: Int) -> UnsafeMutableRawBufferPointer {
    if count > storage.count {
      storage.deallocate()
      storage = .allocate(byteCount: Swift.max(count, storage.count * 2), alignment: 16)
    }
    return storage
  }

  deinit { storage.deallocate() }
}
