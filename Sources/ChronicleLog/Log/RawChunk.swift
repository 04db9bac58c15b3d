import ChronicleLMDB

/// A run of a database's keys and values, copied out of one read transaction so that the work on
/// them (hashing, rendering, writing output) happens after the transaction ended.
///
/// A reader that works inside its transaction keeps the writer from reusing every page freed
/// meanwhile, and the writer's file grows by what it could not reuse. Copying is a memcpy per
/// entry: the transaction lasts as long as the cursor's steps, whatever the reader does next.
struct RawChunk {
  /// Where the copy starts.
  enum Start {
    /// At the first key.
    case first
    /// At the first key equal to or after this one.
    case atLeast([UInt8])
    /// At the first key after this one.
    case after([UInt8])
  }

  private var bytes: [UInt8] = []
  /// Where each record's key ends and its value ends, in `bytes`.
  private var ends: [(key: Int, value: Int)] = []
  /// The read error that stopped the copy; the records before it were copied.
  private(set) var readError: (any Error)?

  /// The number of records copied.
  var count: Int { ends.count }

  /// Copies records with `cursor` from `start`, until `limit` records or `byteLimit` bytes (at
  /// least one record), the end of the database, or a read error (kept in ``readError``).
  init(copying cursor: Cursor, from start: Start, limit: Int, byteLimit: Int = .max) {
    do {
      var item: Cursor.Item?
      switch start {
      case .first:
        item = try cursor.first()
      case .atLeast(let key):
        item = try key.withUnsafeBytes { try cursor.seek(atLeast: $0) }
      case .after(let key):
        item = try key.withUnsafeBytes { try cursor.seek(atLeast: $0) }
        if let (found, _) = item, found.elementsEqual(key) { item = try cursor.next() }
      }
      while let (key, value) = item {
        bytes.append(contentsOf: key)
        let keyEnd = bytes.count
        bytes.append(contentsOf: value)
        ends.append((keyEnd, bytes.count))
        if ends.count == limit || bytes.count >= byteLimit { return }
        item = try cursor.next()
      }
    } catch {
      readError = error
    }
  }

  /// The last key copied.
  var lastKey: [UInt8]? {
    guard let last = ends.indices.last else { return nil }
    return Array(bytes[(last == 0 ? 0 : ends[last - 1].value)..<ends[last].key])
  }

  /// Calls `body` with each record's key and value, in order; `body` returns `false` to stop.
  func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) rethrows {
    try bytes.withUnsafeBytes { all in
      var start = 0
      for end in ends {
        let key = UnsafeRawBufferPointer(rebasing: all[start..<end.key])
        let value = UnsafeRawBufferPointer(rebasing: all[end.key..<end.value])
        guard try body(key, value) else { return }
        start = end.value
      }
    }
  }
}
