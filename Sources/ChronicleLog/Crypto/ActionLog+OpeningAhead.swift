import Dispatch
import Foundation
import LMDB
import Synchronization

// MARK: - Opening ahead

extension ActionLog {
  /// Entries per chunk a scan of an encrypted log hands to its opening thread.
  static let openingChunk = 256

  /// Whether the machine has a second core for the opening thread.
  private static let hasSecondCore = ProcessInfo.processInfo.activeProcessorCount > 1

  /// Whether a scan of `range` that opens every entry decrypts on a second thread: with a second
  /// core, and at least two chunks to overlap.
  static func opensAhead(_ range: ClosedRange<UInt64>) -> Bool {
    hasSecondCore && range.upperBound - range.lowerBound >= UInt64(2 * openingChunk)
  }

  /// Walks `range` with `cursor` (inside the scan's read transaction), opening every entry: this
  /// thread reads and parses a chunk of ``openingChunk`` entries, an opening thread decrypts it
  /// while this thread calls `body` with the chunk before it, and so on; two chunks and their
  /// plaintext buffers, reused, whatever the length of the range.
  ///
  /// What `body` sees, and what is thrown when, is what the one-thread scan does: the entries in
  /// order up to the first one that fails (to decrypt, to parse, or is missing), then that entry's
  /// error; an error of `body` stops the scan once the opening thread is done with its chunk.
  ///
  /// The opening thread only reads the values this thread's transaction holds in the memory map
  /// (valid until it ends, which waits for the opening thread): LMDB's transaction and cursor stay
  /// on this thread.
  func scanOpeningAhead(
    _ range: ClosedRange<UInt64>, cursor: Cursor, cipher: RecordCipher, _ body: (EntryView) throws -> Void
  ) throws {
    let chunks = [OpeningChunk(), OpeningChunk()]
    var turn = 0
    var item = try withSequenceKey(range.lowerBound) { try cursor.seek(atLeast: $0) }
    var expected = range.lowerBound
    var exhausted = false
    // The chunk the opening thread holds, if any: waited for before anything returns or throws.
    var opening: OpeningChunk?
    defer {
      // Taken back if the opening thread has not started it, else waited for.
      if let opening, !opening.claim(opening.turn) { opening.done.wait() }
    }
    // The chunk opened and not yet given to `body`.
    var ready: OpeningChunk?
    let path = self.path
    while true {
      var launched: OpeningChunk?
      var empty: OpeningChunk?
      if !exhausted {
        let chunk = chunks[turn % 2]
        turn += 1
        chunk.reset()
        // Read and parse the next entries (cheap next to their decryption).
        do {
          while chunk.sealed.count < Self.openingChunk {
            guard let (key, value) = item,
              let entry = try scanned(key, value, expected: expected, through: range.upperBound)
            else {
              exhausted = true
              break
            }
            chunk.sealed.append(entry)
            expected = entry.seq + 1
            if entry.seq == range.upperBound {
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
        if chunk.sealed.isEmpty {
          empty = chunk
        } else {
          opening = chunk
          launched = chunk
          let turn = chunk.offer()
          DispatchQueue.global().async {
            guard chunk.claim(turn) else { return }
            chunk.open(cipher: cipher, path: path)
            chunk.done.signal()
          }
        }
      }
      // While that chunk opens, the one before it goes to `body`.
      if let previous = ready {
        ready = nil
        try previous.deliver(body)
      }
      if let launched {
        // Not started yet (a busy machine): this thread opens it rather than wait.
        if launched.claim(launched.turn) {
          launched.open(cipher: cipher, path: path)
        } else {
          launched.done.wait()
        }
        opening = nil
        ready = launched
      } else if let empty {
        try empty.deliver(body)
      }
      if exhausted, ready == nil { return }
    }
  }
}

/// One chunk of an encrypted log's scan: its entries parsed by the scanning thread, then opened by
/// the opening thread into the chunk's own buffer.
// @unchecked Sendable: the two threads never use a chunk's entries at the same time. The scanning
// thread fills it and offers it (`offer`, then `DispatchQueue.async`); whichever thread claims the
// turn first (`claims`, atomic) opens it. The scanning thread touches the entries again only once
// it opened them itself or `done` was signalled by the opening thread; a late opening thread whose
// claim fails touches nothing but `claims`. `turn` is read by the opening thread only through the
// value captured when the turn was offered. The views point into the memory map of the read
// transaction the scanning thread keeps open until the chunk is done.
final class OpeningChunk: @unchecked Sendable {
  /// The entries as read, still sealed, in order.
  var sealed: [EntryView] = []
  /// The first entries of `sealed` opened, up to the first that did not open.
  var opened: [EntryView] = []
  /// Why the entry after `opened` did not open.
  var failure: (any Error)?
  /// What ended the reading after `sealed` (a missing or malformed entry), thrown after them.
  var stop: (any Error)?
  /// The plaintexts of `opened`, one after another.
  private var buffer = OpeningBuffer()
  /// Signalled by the opening thread when it is done with a chunk it claimed.
  let done = DispatchSemaphore(value: 0)
  /// How many times the chunk was offered to the opening thread.
  private(set) var turn: UInt64 = 0
  /// `2 × turn` while the chunk's current turn is unclaimed, `2 × turn + 1` once the opening thread
  /// or the scanning thread claimed it. A late opening thread, whose turn is over, claims nothing.
  private let claims = Atomic<UInt64>(0)

  init() {
    sealed.reserveCapacity(ActionLog.openingChunk)
    opened.reserveCapacity(ActionLog.openingChunk)
  }

  /// Starts a new turn, unclaimed, for the entries just read (the scanning thread).
  func offer() -> UInt64 {
    turn += 1
    claims.store(2 * turn, ordering: .releasing)
    return turn
  }

  /// Whether the caller is the one to open the chunk in `turn`: the first to ask.
  func claim(_ turn: UInt64) -> Bool {
    claims.compareExchange(expected: 2 * turn, desired: 2 * turn + 1, ordering: .acquiringAndReleasing).exchanged
  }

  /// Empties the chunk for the next entries (its arrays and buffer keep their memory).
  func reset() {
    sealed.removeAll(keepingCapacity: true)
    opened.removeAll(keepingCapacity: true)
    failure = nil
    stop = nil
  }

  /// Opens `sealed` into `opened`, stopping at the first entry that does not open (the opening thread).
  func open(cipher: RecordCipher, path: String) {
    let total = sealed.reduce(0) { $0 + ($1.sealed?.ciphertext.count ?? 0) }
    let memory = buffer.reserve(total)
    var offset = 0
    for entry in sealed {
      do {
        opened.append(
          try ActionLog.opened(entry, cipher: cipher, path: path) { count in
            defer { offset += count }
            return UnsafeMutableRawBufferPointer(rebasing: memory[offset..<(offset + count)])
          })
      } catch {
        failure = error
        return
      }
    }
  }

  /// Calls `body` with the opened entries, then throws what stopped the chunk early, if anything.
  func deliver(_ body: (EntryView) throws -> Void) throws {
    for entry in opened { try body(entry) }
    if let failure { throw failure }
    if let stop { throw stop }
  }
}
