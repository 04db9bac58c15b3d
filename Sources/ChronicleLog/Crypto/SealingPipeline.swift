import Foundation

/// Seals an encrypted batch's entries and computes their hashes on two threads.
///
/// Sealing is independent per entry; the hashes are not (entry i + 1's chain hash covers entry i's
/// sealed value, and a leaf covers its entry's chain hash). So the entries are sealed in groups
/// (``SharedGroups``) by whichever thread claims the next group, and the calling thread hashes the
/// chain in order, each run of sealed groups as soon as it is sealed; when the next group to hash
/// is not sealed yet, the calling thread seals the next unclaimed one. The leaves come after the
/// sealing in the same groups' order: each waits for the chain to pass its entries (``ChainProgress``)
/// and is hashed by whichever thread claims it, mostly the helper once the sealing is claimed. Both
/// threads stay busy to the end, and the batch costs its encoding plus about half of its sealing
/// and hashing on the caller.
///
/// The helper thread is started when the batch begins (``start(entries:)``), before its entries
/// are encoded, so that it is awake and spinning when they are ready: a thread woken only then
/// starts late and leaves most of the sealing to the caller.
///
/// The caller must end the pipeline it started, with ``sealAndHash(_:in:cipher:ends:first:previous:leaves:)``
/// or ``abandon()`` (when the batch fails before it is sealed): the helper waits for one of them.
struct SealingPipeline {
  private let groups: SharedGroups

  /// A pipeline with its helper thread started, for a batch of `entries` entries; `nil` when the
  /// batch is sealed on the calling thread alone (a small batch, or a machine with one core).
  static func start(entries: Int) -> SealingPipeline? {
    SharedGroups.start(items: entries).map(SealingPipeline.init)
  }

  /// Lets the helper go without a batch (the caller's batch failed before it was sealed).
  func abandon() { groups.abandon() }

  /// Seals `records` in place in `buffer` (the batch's stored values, laid out as
  /// ``EntryHashes/compute(_:ends:first:previous:leaves:)`` has them) on this thread and the
  /// helper, and computes the entries' chain hashes and, when `leaves` is not `nil`, their leaf
  /// hashes, as ``EntryHashes/compute(_:ends:entries:first:previous:leaves:)`` does.
  ///
  /// - Throws: the first entry's sealing failure, in the batch's order; the hashes are then
  ///   incomplete (the batch must not be written).
  func sealAndHash(
    _ records: [RecordCipher.PendingSeal], in buffer: UnsafeMutableRawBufferPointer, cipher: RecordCipher,
    ends: UnsafeBufferPointer<Int>, first: UInt64, previous: UnsafePointer<UInt8>, leaves: UnsafeMutablePointer<UInt8>?
  ) throws(LogError) {
    precondition(records.count == ends.count, "one record per entry")
    let groupCount = SharedGroups.groups(of: records.count)
    // Each group's failure, written by the thread that seals the group before its done flag is set.
    let failures = UnsafeMutablePointer<LogError?>.allocate(capacity: groupCount)
    failures.initialize(repeating: nil, count: groupCount)
    defer {
      failures.deinitialize(count: groupCount)
      failures.deallocate()
    }
    let chained = ChainProgress()
    // Groups 0..<groupCount seal; with leaves, groups groupCount... hash the same groups' leaves.
    groups.publish(groups: leaves == nil ? groupCount : 2 * groupCount) { group in
      guard group >= groupCount else {
        for record in records[SharedGroups.items(of: group, among: records.count)] {
          do throws(LogError) { try cipher.seal(record, in: buffer) } catch {
            failures[group] = error
            break
          }
        }
        return
      }
      let entries = SharedGroups.items(of: group - groupCount, among: records.count)
      guard let leaves, chained.wait(beyond: entries.upperBound - 1) != ChainProgress.abandoned else { return }
      EntryHashes.leaves(UnsafeRawBufferPointer(buffer), ends: ends, entries: entries, first: first, into: leaves)
    }
    // Every group has run when this returns, failed or not: the helper never outlives the batch.
    defer { groups.finish() }

    var hashed = 0
    var failure: LogError?
    while hashed < groupCount {
      var sealed = hashed
      while sealed < groupCount, groups.isDone(sealed) { sealed += 1 }
      guard sealed > hashed else {
        // The next group to hash is being sealed: seal another meanwhile (never a leaf group, which
        // waits for this thread), or wait for it.
        if !groups.runNext(below: groupCount) {
          while !groups.isDone(hashed) { sched_yield() }
        }
        continue
      }
      if failure == nil {
        failure = (hashed..<sealed).lazy.compactMap { failures[$0] }.first
        if failure == nil {
          let entries = (hashed * SharedGroups.groupSize)..<min(sealed * SharedGroups.groupSize, records.count)
          let before = entries.lowerBound == 0 ? previous : UnsafePointer(
            buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + ends[entries.lowerBound - 1] - EntryFormat.hashSize)
          EntryHashes.compute(buffer, ends: ends, entries: entries, first: first, previous: before, leaves: nil)
          chained.advance(to: entries.upperBound)
        }
      }
      hashed = sealed
    }
    if let failure {
      chained.abandon()
      throw failure
    }
  }
}
