#if LogTool
import ChronicleLog

/// Walks a log's entries in chunks, each read in its own short read transaction, and hands
/// them to the caller outside any transaction.
///
/// So a command never writes output inside a read transaction: a slow consumer (`| less`)
/// pins no pages for long, and a reader that goes away (`| head`) cannot make the process
/// die inside one, which would leave a stale slot in LMDB's reader table.
enum RecordWalk {
  /// Entries read per transaction.
  static let chunkSize: UInt64 = 1024

  /// Calls `body` with each entry of `range`, ascending or, with `reverse`, descending;
  /// `body` returns `false` to stop.
  ///
  /// - Throws: what reading or `body` throws, and ``OutputClosed`` once the reader of
  ///   standard output went away.
  static func forEach(
    _ log: ActionLog, in range: ClosedRange<UInt64>, reverse: Bool = false, chunk: UInt64 = chunkSize,
    _ body: (StoredEntry) throws -> Bool
  ) throws {
    // Each chunk starts where the last one's entries ended, found by the cursor, never by
    // counting sequence numbers: a stray key far past the others (2^63) costs one chunk, not 2^53.
    var remaining = range
    while true {
      let records = try log.records(in: remaining, reverse: reverse, limit: Int(chunk))
      for record in records {
        guard try body(record) else { return }
      }
      if StandardOutput.isClosed { throw OutputClosed() }
      guard records.count == Int(chunk), let last = records.last?.seq else { return }
      if reverse {
        guard last > remaining.lowerBound else { return }
        remaining = remaining.lowerBound...(last - 1)
      } else {
        guard last < remaining.upperBound else { return }
        remaining = (last + 1)...remaining.upperBound
      }
    }
  }
}

/// Thrown when the reader of standard output went away: the command stops and exits 0.
struct OutputClosed: Error {}
#endif  // LogTool
