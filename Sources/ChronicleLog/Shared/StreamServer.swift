/// One entry of a shared stream as the server holds it: the entry's stored bytes, its chain hash,
/// and which device appended it.
///
/// `body` is exactly what a Chronicle log stores for the entry before its hash (sealed, for an
/// encrypted stream), and `hash` is SHA-256(previous hash ‖ seq as 8 bytes big-endian ‖ body):
/// every device appends the same bytes at the same `seq`, so every device holds the same chain.
public struct StreamRecord: Sendable, Hashable {
  /// The entry's place in the stream, from 1.
  public var seq: UInt64
  /// The entry's stored bytes, without the hash.
  public var body: [UInt8]
  /// The entry's chain hash (32 bytes).
  public var hash: [UInt8]
  /// The device that appended the entry, as the server recorded it.
  public var device: String

  /// Creates a record.
  public init(seq: UInt64, body: [UInt8], hash: [UInt8], device: String) {
    self.seq = seq
    self.body = body
    self.hash = hash
    self.device = device
  }
}

/// The server that orders a shared stream: it keeps the stream's entries in one global order,
/// appends a device's entries only where they continue the stream's head, and tells waiting
/// devices when new entries arrive.
///
/// ChroniclePostgres implements it on PostgreSQL (`PostgresStreamServer`), with the ordering,
/// chain and append-only rules enforced by the database. Every call must end within a deadline
/// of the server's own: a `SharedStore` (Chronicle) syncing through it treats a thrown error as an outage
/// and tries again later.
public protocol StreamServer: Sendable {
  /// The stream's entries after `seq`, in order, at most `limit` of them (fewer at the head).
  func records(after seq: UInt64, limit: Int) async throws -> [StreamRecord]

  /// Appends `records` (consecutive, each linked to the one before, the first to `previousHash`,
  /// all of one device) in one transaction.
  ///
  /// - Returns: `true` when they were appended; `false`, with nothing written, when the stream's
  ///   head is no longer `records[0].seq - 1` because another device appended first.
  /// - Throws: when the server refuses them for another reason, or cannot be reached.
  func append(_ records: [StreamRecord], previousHash: [UInt8]) async throws -> Bool

  /// Returns once the stream may hold entries after `seq`, or once `timeout` has passed.
  func waitForRecords(after seq: UInt64, timeout: Duration) async throws
}
