#if Postgres
import ChronicleLog
import PostgresNIO

// MARK: - The derived columns, checked against the entries' bytes

/// Checks that the columns the server derives from each entry's stored bytes (`kind`, `flags`,
/// `type_name`, `timestamp`, `metadata`, `codec`, `schema_version`, `payload`, `payload_json`,
/// `key_id`) are what shipping those bytes stores. The chain check covers only `body` and `hash`;
/// the audit queries read the derived columns, so a column changed behind the triggers' back must
/// be found too. The bytes are parsed here, with the log's own reader, and the stored columns are
/// compared on the server with what the shipper's insert would store (jsonb compared as jsonb).
package struct StoredColumnsCheck: Sendable {
  /// The client.
  package let client: PostgresClient
  /// The log.
  package let logID: [UInt8]
  /// The entries read per query.
  package var page = 2_000

  /// Creates the check of log `logID` through `client`.
  package init(client: PostgresClient, logID: [UInt8]) {
    self.client = client
    self.logID = logID
  }

  /// What one page found.
  package struct Page: Sendable {
    /// The last sequence number read, `nil` when there was no entry after the one asked.
    package var last: Int64?
    /// One sentence per entry whose bytes do not parse or whose columns differ.
    package var problems: [String]
  }

  /// Checks the entries after `after`, up to ``page`` of them.
  package func check(after: Int64) async throws -> Page {
    let id = ByteBuffer(bytes: logID)
    let rows = try await client.query(
      """
      SELECT seq, body, hash FROM chronicle.entries WHERE log_id = \(id) AND seq > \(after)
      ORDER BY seq LIMIT \(page)
      """, logger: PostgresLogging.quiet)
    var columns = Shipping.Columns(capacity: page, previous: [])
    var problems: [String] = []
    var last: Int64?
    for try await (seq, body, hash) in rows.decode((Int64, ByteBuffer, ByteBuffer).self) {
      last = seq
      let value = Array(body.readableBytesView) + Array(hash.readableBytesView)
      do {
        try value.withUnsafeBytes { value in
          columns.append(try EntryView.parse(storedValue: value, seq: UInt64(seq)))
        }
      } catch {
        problems.append("entry \(seq): its stored bytes are not an entry (\(error))")
      }
    }
    guard columns.count > 0 else { return Page(last: last, problems: problems) }
    let differences = Shipping.derivedColumns.map { derived in
      "CASE WHEN e.\(derived.column) IS DISTINCT FROM \(derived.value) THEN '\(derived.column.filter { $0 != "\"" })' END"
    }
    let differing = try await client.query(
      PostgresQuery(
        unsafeSQL: """
          SELECT seq, differing FROM (
            SELECT b.seq, array_remove(ARRAY[\(differences.joined(separator: ", "))], NULL) AS differing
            FROM \(Shipping.batchRows) JOIN chronicle.entries e ON e.log_id = $1 AND e.seq = b.seq) c
          WHERE cardinality(differing) > 0 ORDER BY seq
          """, binds: columns.binds(logID: logID)), logger: PostgresLogging.quiet)
    for try await (seq, names) in differing.decode((Int64, [String]).self) {
      problems.append(
        "entry \(seq): \(names.joined(separator: ", ")) \(names.count == 1 ? "is" : "are") not what its stored bytes hold")
    }
    return Page(last: last, problems: problems)
  }
}
#endif  // Postgres
