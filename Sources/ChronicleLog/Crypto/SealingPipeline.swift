import Dispatch
import Foundation
import Synchronization

/// Seals an encrypted batch's entries and computes their hashes on two threads.
///
/// Sealing is independent per entry; the hashes are not (entry i + 1's chain hash covers entry i's
/// sealed value, and a leaf covers its entry's chain hash). So the entries are sealed in groups of
/// ``groupSize`` by whichever thread claims the next group, and the calling thread hashes them in
/// order, each run of sealed groups as soon as it is sealed; when the next group to hash is not
/// sealed yet, the calling thread seals the next unclaimed one. Both threads stay busy to the end,
/// and the batch costs its encoding plus about half of its sealing and hashing on the caller.
///
/// The helper thread is started when the batch begins (``start(entries:)``), before its entries
/// are encoded, so that it is awake and spinning when they are ready: a thread woken only then
/// starts late and leaves most of the sealing to the caller.
///
/// The caller must end the pipeline it started, with ``sealAndHash(_:in:cipher:ends:first:previous:leaves:)``
/// or ``abandon()`` (when the batch fails before it is sealed): the helper waits for one of them.
// @unchecked Sendable: the batch's fields (`records`, `buffer`, `cipher`, `groupCount`, `done`,
// `failures`) are written by the calling thread before it sets `published` and signals `wake`, and
// never again; the helper reads them only after it waited on `wake`. A group is sealed by the one
// thread that claimed it from `next`, which writes only that group's bytes of `buffer` and its slot
// of `failures`, then sets its `done` flag (releasing); the caller reads a group's bytes and slot
// only after seeing that flag (acquiring), and returns only once every flag is set, so the helper
// never touches `buffer` after the batch ends.
final class SealingPipeline: @unchecked Sendable {
  /// Entries a thread seals at once.
  static let groupSize = 16
  /// Entries from which a batch is sealed on two threads.
  static let minimumEntries = 64
  /// How long the helper spins for the batch before it sleeps (a batch of 1,000 entries is
  /// encoded in well under a millisecond).
  static let helperSpin: UInt64 = 1_000_000

  private var records: [RecordCipher.PendingSeal] = []
  private var buffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
  private var cipher: RecordCipher?
  private var groupCount = 0
  private var done: UnsafeMutablePointer<Atomic<Bool>>?
  private var failures: UnsafeMutablePointer<LogError?>?
  /// Whether the caller has handed over the batch (or abandoned it): its thread's only.
  private var isPublished = false

  private let published = Atomic<Bool>(false)
  private let wake = DispatchSemaphore(value: 0)
  /// The next group to hand out.
  private let next = Atomic<Int>(0)

  private init() {}

  deinit {
    if let done {
      done.deinitialize(count: groupCount)
      done.deallocate()
    }
    if let failures {
      failures.deinitialize(count: groupCount)
      failures.deallocate()
    }
  }

  /// A pipeline with its helper thread started, for a batch of `entries` entries; `nil` when the
  /// batch is sealed on the calling thread alone (a small batch, or a machine with one core).
  static func start(entries: Int) -> SealingPipeline? {
    guard entries >= minimumEntries, ActionLog.hasSecondCore else { return nil }
    let pipeline = SealingPipeline()
    DispatchQueue.global().async { pipeline.help() }
    return pipeline
  }

  /// The helper: waits for the batch, then seals groups until none is left.
  private func help() {
    _ = OpeningWorker.spin(for: Self.helperSpin) { published.load(ordering: .acquiring) }
    wake.wait()
    while sealNextGroup() {}
  }

  /// Lets the helper go without a batch (the caller's batch failed before it was sealed).
  func abandon() {
    guard !isPublished else { return }
    publish()
  }

  private func publish() {
    isPublished = true
    published.store(true, ordering: .releasing)
    wake.signal()
  }

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
    precondition(!isPublished && records.count == ends.count, "one batch per pipeline, one record per entry")
    self.records = records
    self.buffer = buffer
    self.cipher = cipher
    groupCount = (records.count + Self.groupSize - 1) / Self.groupSize
    done = .allocate(capacity: groupCount)
    failures = .allocate(capacity: groupCount)
    for group in 0..<groupCount {
      (done! + group).initialize(to: Atomic(false))
      (failures! + group).initialize(to: nil)
    }
    publish()

    var hashed = 0
    var failure: LogError?
    while hashed < groupCount {
      var sealed = hashed
      while sealed < groupCount, done![sealed].load(ordering: .acquiring) { sealed += 1 }
      guard sealed > hashed else {
        // The next group to hash is being sealed: seal another meanwhile, or wait for it.
        if !sealNextGroup() {
          while !done![hashed].load(ordering: .acquiring) { sched_yield() }
        }
        continue
      }
      if failure == nil {
        failure = (hashed..<sealed).lazy.compactMap { self.failures![$0] }.first
        if failure == nil {
          let entries = (hashed * Self.groupSize)..<min(sealed * Self.groupSize, records.count)
          let before = entries.lowerBound == 0 ? previous : UnsafePointer(
            buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + ends[entries.lowerBound - 1] - EntryFormat.hashSize)
          EntryHashes.compute(buffer, ends: ends, entries: entries, first: first, previous: before, leaves: leaves)
        }
      }
      hashed = sealed
    }
    if let failure { throw failure }
  }

  /// Seals the next group no thread has claimed yet; `false` when none is left.
  private func sealNextGroup() -> Bool {
    let group = next.add(1, ordering: .relaxed).oldValue
    guard group < groupCount, let cipher else { return false }
    for record in records[(group * Self.groupSize)..<min(records.count, (group + 1) * Self.groupSize)] {
      do { try cipher.seal(record, in: buffer) } catch {
        failures![group] = error
        break
      }
    }
    done![group].store(true, ordering: .releasing)
    return true
  }
}
