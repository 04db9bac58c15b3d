import ChronicleLog
import Foundation
import Synchronization

/// Timelines at some sequence numbers, so that stepping through history does not refold from a snapshot each time.
@usableFromInline struct KeyframeCache<State> {
  /// Keyframes are kept at multiples of this sequence number.
  @usableFromInline static var interval: UInt64 { 128 }
  static var capacity: Int { 64 }

  private var frames: [UInt64: UndoCursor<State>] = [:]
  private var order: [UInt64] = []

  func best(atOrBefore seq: UInt64) -> UndoCursor<State>? {
    var best: UndoCursor<State>?
    for (key, frame) in frames where key <= seq && key > (best?.seq ?? 0) { best = frame }
    return best
  }

  @usableFromInline
  mutating func insert(_ cursor: UndoCursor<State>) {
    if frames.updateValue(cursor, forKey: cursor.seq) == nil { order.append(cursor.seq) }
    if order.count > Self.capacity { frames[order.removeFirst()] = nil }
  }

  /// Forgets everything (after the log was cut or rewritten).
  mutating func removeAll() {
    frames.removeAll()
    order.removeAll()
  }
}

/// The keyframe cache shared by a store and its replayer.
@usableFromInline final class Keyframes<State: Sendable>: Sendable {
  @usableFromInline let cache = Mutex(KeyframeCache<State>())
  /// How many states a fold had to compute apart because its plan missed them
  /// (0 unless planning is wrong: each such fold costs linearity, not correctness).
  @usableFromInline let unplannedFolds = Atomic<Int>(0)

  @usableFromInline init() {}
}
