import Dispatch
import Foundation
import ChronicleLMDB
import Synchronization

// MARK: - Opening on two threads

extension ActionLog {
  /// Entries per chunk of a scan that opens on two threads.
  static let openingChunk = 1_024

  /// Whether a scan of `range` that opens every entry shares the opening with a second thread: with
  /// a second core, and at least a chunk of entries.
  static func opensAhead(_ range: ClosedRange<UInt64>) -> Bool {
    SharedGroups.hasSecondCore && range.upperBound - range.lowerBound >= UInt64(openingChunk)
  }

  /// Walks `range` with `cursor` (inside the scan's read transaction), opening every entry on two
  /// threads. This thread collects the stored values of a chunk of ``openingChunk`` entries
  /// (checking only that their sequence numbers follow) and offers it to an opening thread, which
  /// parses and decrypts it while this thread calls `body` with the chunk before it; then this
  /// thread opens what is left of the new chunk alongside the opening thread, a block at a time.
  /// Neither thread waits for the other but for the last block, and the chunks (two, with their
  /// plaintext buffers) are reused whatever the length of the range.
  ///
  /// What `body` sees, and what is thrown when, is what the one-thread scan does: the entries in
  /// order up to the first one that fails (to parse, to decrypt, or is missing), then that entry's
  /// error; an error of `body` stops the scan once the chunk being opened is done.
  ///
  /// The opening thread only reads the values this thread's transaction holds in the memory map
  /// (valid until it ends, which waits for the opening thread): LMDB's transaction and cursor stay
  /// on this thread.
  func scanOpeningAhead(
    _ range: ClosedRange<UInt64>, cursor: Cursor, cipher: RecordCipher, _ body: (EntryView) throws -> Void
  ) throws {
    let path = self.path
    let chunks = [OpeningChunk(), OpeningChunk()]
    let worker = OpeningWorker(cipher: cipher, path: path)
    // The chunk being opened, if any: finished before anything returns or throws, and the opening
    // thread stopped, so that nothing reads the memory map once the transaction ends.
    var opening: OpeningChunk?
    defer {
      if let opening {
        opening.help(cipher: cipher, path: path)
        opening.waitUntilOpened()
      }
      worker.stop()
    }
    var turn: UInt64 = 0
    var item = try withSequenceKey(range.lowerBound) { try cursor.seek(atLeast: $0) }
    var expected = range.lowerBound
    var exhausted = false
    // The chunk opened and not yet given to `body`.
    var ready: OpeningChunk?
    while true {
      var filled: OpeningChunk?
      if !exhausted {
        turn += 1
        let chunk = chunks[Int(turn % 2)]
        chunk.retire()
        do {
          while chunk.stored.count < Self.openingChunk {
            guard let (key, value) = item, let seq = try scannedSeq(key, expected: expected, through: range.upperBound)
            else {
              exhausted = true
              break
            }
            chunk.stored.append((seq, value))
            expected = seq + 1
            if seq == range.upperBound {
              exhausted = true
              break
            }
            item = try cursor.next()
          }
          if exhausted, expected <= range.upperBound { throw LogError.noSuchEntry(path: path, seq: expected) }
        } catch {
          chunk.stop = error
          exhausted = true
        }
        chunk.publish(turn)
        if !chunk.stored.isEmpty {
          opening = chunk
          worker.offer(chunk, turn: turn)
        }
        filled = chunk
      }
      // While the opening thread starts on the new chunk, the one before it goes to `body`.
      if let previous = ready {
        ready = nil
        try previous.deliver(body)
      }
      guard let filled else { return }
      if let chunk = opening {
        chunk.help(cipher: cipher, path: path)
        chunk.waitUntilOpened()
        opening = nil
      }
      ready = filled
    }
  }
}

/// One chunk of an encrypted log's scan: its entries' stored values collected by the scanning
/// thread, then parsed and opened, a block of ``blockSize`` entries at a time, by whichever of the
/// two threads takes the next block, each entry into its own place of the chunk's buffer.
///
/// A turn of the chunk: the scanning thread ``retire()``s it (no thread is still in its last
/// turn), fills `stored`, ``publish(_:)``es the turn, offers it to the opening thread, then
/// ``help(cipher:path:)``s, ``waitUntilOpened()`` and ``deliver(_:)``s.
// @unchecked Sendable: between `publish` and the end of `waitUntilOpened`, the threads share only
// the atomics (`turn`, `active`, `next`, `done`), `failures` (behind a mutex), and the disjoint
// entries of `views` and `memory` each block owns (a block is handed out once, by `next`); the
// scanning thread reads `views` and `failures` only after `done` reached the count (acquiring what
// the threads wrote before they counted their blocks). Everything else belongs to the scanning
// thread: it changes it only after `retire`, which waits until no opening thread is inside
// (`active`), and the opening thread enters only a turn that is still published.
final class OpeningChunk: @unchecked Sendable {
  /// Entries a thread takes at once.
  static let blockSize = 32

  /// The entries' sequence numbers and stored values, in order.
  var stored: [(seq: UInt64, value: UnsafeRawBufferPointer)] = []
  /// What ended the reading after `stored` (a missing entry or a bad key), thrown after them.
  var stop: (any Error)?
  /// The entries of `stored` opened, each in its place.
  private let views = UnsafeMutableBufferPointer<EntryView>.allocate(capacity: ActionLog.openingChunk)
  /// Where each entry's plaintext goes in `memory` (it is shorter than the stored value).
  private var offsets: [Int] = []
  /// The plaintexts.
  private var buffer = OpeningBuffer()
  private var memory = UnsafeMutableRawBufferPointer(start: nil, count: 0)
  /// The published turn (0 while the scanning thread changes the chunk).
  private let turn = Atomic<UInt64>(0)
  /// Opening threads inside the chunk (``enter(_:)`` to ``leave()``).
  private let active = Atomic<Int>(0)
  /// The first entry of the next block to hand out.
  private let next = Atomic<Int>(0)
  /// Entries whose blocks are done (opened or stopped by a failure).
  private let done = Atomic<Int>(0)
  /// Signalled by the thread that finishes the turn's last block.
  private let finished = DispatchSemaphore(value: 0)
  /// The entries that did not parse or open, with why.
  private let failures = Mutex<[(index: Int, error: any Error)]>([])

  init() {
    stored.reserveCapacity(ActionLog.openingChunk)
    offsets.reserveCapacity(ActionLog.openingChunk)
  }

  deinit { views.deallocate() }

  /// Ends the chunk's turn: waits until no opening thread is inside it, then empties it for the
  /// next entries (the scanning thread).
  func retire() {
    turn.store(0, ordering: .sequentiallyConsistent)
    while !OpeningWorker.spin({ active.load(ordering: .sequentiallyConsistent) == 0 }) {}
    stored.removeAll(keepingCapacity: true)
    stop = nil
  }

  /// Makes the chunk's entries ready to open in `turn` (the scanning thread, once `stored` is filled).
  func publish(_ turn: UInt64) {
    offsets.removeAll(keepingCapacity: true)
    var total = 0
    for entry in stored {
      offsets.append(total)
      total += entry.value.count
    }
    memory = buffer.reserve(total)
    failures.withLock { $0.removeAll(keepingCapacity: true) }
    next.store(0, ordering: .relaxed)
    done.store(0, ordering: .relaxed)
    self.turn.store(turn, ordering: .sequentiallyConsistent)
  }

  /// Whether the opening thread may help in `turn`: the chunk is still in it. Pair with ``leave()``.
  func enter(_ turn: UInt64) -> Bool {
    active.add(1, ordering: .sequentiallyConsistent)
    guard self.turn.load(ordering: .sequentiallyConsistent) == turn else {
      leave()
      return false
    }
    return true
  }

  func leave() { active.subtract(1, ordering: .sequentiallyConsistent) }

  /// Opens blocks of the chunk until none is left to hand out.
  func help(cipher: RecordCipher, path: String) {
    let count = stored.count
    while true {
      let start = next.add(Self.blockSize, ordering: .relaxed).oldValue
      guard start < count else { return }
      let end = min(start + Self.blockSize, count)
      open(start..<end, cipher: cipher, path: path)
      if done.add(end - start, ordering: .acquiringAndReleasing).newValue == count { finished.signal() }
    }
  }

  /// Parses and opens the entries at `indices`, stopping at the first that does not parse or open.
  private func open(_ indices: Range<Int>, cipher: RecordCipher, path: String) {
    for index in indices {
      let (seq, value) = stored[index]
      do {
        let entry: EntryView
        do { entry = try EntryFormat.parse(value, seq: seq) } catch {
          throw LogError.corruptEntry(path: path, seq: seq, reason: "\(error)")
        }
        let start = offsets[index]
        (views.baseAddress! + index).initialize(
          to: try ActionLog.opened(entry, cipher: cipher, path: path) { count in
            UnsafeMutableRawBufferPointer(rebasing: memory[start..<(start + count)])
          })
      } catch {
        failures.withLock { $0.append((index, error)) }
        return
      }
    }
  }

  /// Waits until every block of the turn is done: first spinning briefly (the other thread is
  /// usually about to finish its block, and waking a sleeping thread costs more than the wait),
  /// then on `finished`, which the last block signals once per turn in either case.
  func waitUntilOpened() {
    let count = stored.count
    _ = OpeningWorker.spin { done.load(ordering: .acquiring) == count }
    finished.wait()
  }

  /// Calls `body` with the opened entries in order up to the first that failed, then throws that
  /// entry's error, or what stopped the reading, if anything.
  func deliver(_ body: (EntryView) throws -> Void) throws {
    let failure = failures.withLock { $0.min { $0.index < $1.index } }
    for index in 0..<(failure?.index ?? stored.count) { try body(views[index]) }
    if let failure { throw failure.error }
    if let stop { throw stop }
  }
}

/// The opening thread of one scan: one work item on a global queue that helps open each chunk
/// the scanning thread offers it, until ``stop()``.
///
/// Handing a chunk over costs no system call while the thread is awake: between chunks it spins
/// on the count of offers (for up to 2 ms) before it sleeps on `wake`.
// @unchecked Sendable: `slot` is behind a mutex, `offers` is atomic, the semaphores are
// thread-safe, and a chunk is entered only in the turn it was offered in (``OpeningChunk/enter(_:)``).
final class OpeningWorker: @unchecked Sendable {
  /// The chunk offered last and its turn; `nil` once the scan stops.
  private let slot = Mutex<(chunk: OpeningChunk, turn: UInt64)?>(nil)
  /// Offers made, the stop included (each also signals `wake` once).
  private let offers = Atomic<UInt64>(0)
  private let wake = DispatchSemaphore(value: 0)
  /// Signalled once by the work item when it returns.
  private let exited = DispatchSemaphore(value: 0)

  init(cipher: RecordCipher, path: String) {
    DispatchQueue.global().async { [self] in
      var taken: UInt64 = 0
      while true {
        // Long enough to span the scanning thread's turn (its `body` calls, mostly): a sleeping
        // thread woken for every chunk starts late and leaves most of the chunk to the other.
        _ = Self.spin(for: 2_000_000) { offers.load(ordering: .acquiring) > taken }
        wake.wait()
        taken += 1
        guard let (chunk, turn) = slot.withLock({ $0 }) else { break }
        // An offer seen late, for a chunk already done or in its next turn, is left alone.
        guard chunk.enter(turn) else { continue }
        chunk.help(cipher: cipher, path: path)
        chunk.leave()
      }
      exited.signal()
    }
  }

  /// Offers `chunk`, published in `turn`, to the opening thread.
  func offer(_ chunk: OpeningChunk, turn: UInt64) {
    slot.withLock { $0 = (chunk, turn) }
    offers.add(1, ordering: .releasing)
    wake.signal()
  }

  /// Ends the work item and waits for it to return: after this, it touches nothing of the scan.
  func stop() {
    slot.withLock { $0 = nil }
    offers.add(1, ordering: .releasing)
    wake.signal()
    exited.wait()
  }

  /// Spins until `condition` holds or about `nanoseconds` have passed; whether it holds.
  static func spin(for nanoseconds: UInt64 = 50_000, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + nanoseconds
    while true {
      for _ in 0..<64 where condition() { return true }
      if DispatchTime.now().uptimeNanoseconds > deadline { return condition() }
    }
  }
}
