import ChronicleLog
import Foundation
import Synchronization

/// The restore, undo and redo entries of a range to fold, and the states they need.
///
/// A jump entry's state *is* the state after its target, so each jump is
/// mapped to a canonical target: its target, or, when that is itself a jump of
/// the range, that jump's canonical target. Only *live* jumps get their
/// target's state: for recovery and `state(at:)`, the last jump before the
/// wanted entry, the last jump before that jump's canonical target, and so on
/// (``need(_:)``); for a fold that shows every state, all of them
/// (``needAll()``). The fold keeps the state after each canonical target of a
/// live jump from the moment it is folded until the last live jump that needs
/// it, and no longer. Targets before the range (``outside``) are computed by
/// folds below it.
///
/// Memory: three integers per jump entry of the range, and one state per
/// canonical target whose last live jump is still ahead: for recovery and
/// `state(at:)` at most one per link of the chain above; for a fold of every
/// state, at most `2 × undoDepth + 1` for undo and redo entries (they only
/// return to states on the stacks) plus one per restore entry still ahead.
@usableFromInline struct JumpPlan {
  /// The seq the range starts after (its base's).
  @usableFromInline let base: UInt64
  /// For each jump entry, its canonical target.
  @usableFromInline var jumps: [UInt64: UInt64] = [:]
  /// The jump entries, in log order.
  @usableFromInline var order: [UInt64] = []
  /// The jumps whose target's state the fold computes (all of them for a full fold).
  @usableFromInline var live: Set<UInt64> = []
  /// How many jumps still ahead need the state after each canonical target.
  @usableFromInline var uses: [UInt64: Int] = [:]
  /// Canonical targets before the base: states the range needs from below.
  @usableFromInline var outside: Set<UInt64> = []

  @usableFromInline init(base: UInt64) { self.base = base }

  /// The canonical target of `seq`: itself unless it is a jump of the range.
  @inlinable func canonical(of seq: UInt64) -> UInt64 { jumps[seq] ?? seq }

  /// Records jump entry `seq` to `target` (in log order).
  @usableFromInline
  mutating func add(jump seq: UInt64, target: UInt64) {
    jumps[seq] = canonical(of: target)
    order.append(seq)
  }

  /// Every jump gets its target's state: for a fold that shows every state.
  @usableFromInline
  mutating func needAll() {
    for seq in order { markLive(seq) }
  }

  /// Only the states after `seqs` are wanted: the jumps they depend on get their
  /// target's state. The state after an entry depends on the last jump at or
  /// before it (or on the base, if there is none), and that jump on the state
  /// after its canonical target, which depends on the last jump before it, and
  /// so on: a chain, one live jump per link.
  @usableFromInline
  mutating func need(_ seqs: some Sequence<UInt64>) {
    var work = Array(seqs)
    var seen = Set<UInt64>()
    while let seq = work.popLast() {
      guard seq > base, seen.insert(seq).inserted else { continue }
      // The last jump at or before `seq`.
      var low = 0
      var high = order.count
      while low < high {
        let middle = (low + high) / 2
        if order[middle] <= seq { low = middle + 1 } else { high = middle }
      }
      guard low > 0 else { continue }
      let jump = order[low - 1]
      guard !live.contains(jump) else { continue }
      markLive(jump)
      work.append(jumps[jump] ?? base)
    }
  }

  private mutating func markLive(_ jump: UInt64) {
    guard let canonical = jumps[jump], live.insert(jump).inserted else { return }
    uses[canonical, default: 0] += 1
    if canonical < base { outside.insert(canonical) }
  }

  /// A jump to `target` was folded; returns whether no later jump needs its state.
  @usableFromInline
  mutating func release(_ target: UInt64) -> Bool {
    guard let count = uses[target] else { return true }
    if count > 1 {
      uses[target] = count - 1
      return false
    }
    uses[target] = nil
    return true
  }
}
