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
    var remaining: ClosedRange<UInt64>? = range
    while let rest = remaining {
      let piece: ClosedRange<UInt64>
      if reverse {
        let lower = rest.upperBound - rest.lowerBound >= chunk ? rest.upperBound - (chunk - 1) : rest.lowerBound
        piece = lower...rest.upperBound
        remaining = lower > rest.lowerBound ? rest.lowerBound...(lower - 1) : nil
      } else {
        let upper = rest.upperBound - rest.lowerBound >= chunk ? rest.lowerBound + (chunk - 1) : rest.upperBound
        piece = rest.lowerBound...upper
        remaining = upper < rest.upperBound ? (upper + 1)...rest.upperBound : nil
      }
      let records = try log.records(in: piece)
      for record in reverse ? records.reversed() : records {
        guard try body(record) else { return }
      }
      if StandardOutput.isClosed { throw OutputClosed() }
    }
  }
}

/// Thrown when the reader of standard output went away: the command stops and exits 0.
struct OutputClosed: Error {}
