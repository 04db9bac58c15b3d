import Dispatch
import Foundation
import Synchronization

/// A batch's independent per-item work (sealing entries, encoding actions), split into numbered
/// groups that the calling thread and one helper thread claim in turn: the batch's work on two
/// cores, while the caller also does what only it can (hashing in order, reducing).
///
/// The helper is started with the batch (``start(items:)``), possibly before the work is known:
/// it spins for up to ``helperSpin``, then sleeps, until ``publish(groups:_:)`` hands it the work,
/// and claims groups until none is left. The caller claims groups too (``runNext()``); a group's
/// ``isDone(_:)`` turns `true` once it ran, and ``finish()`` returns once every group has.
///
/// The caller must publish the work, or ``abandon()`` it, once it started a helper: the helper
/// waits for one of them.
// @unchecked Sendable: `work`, `groupCount` and `done` are written by the calling thread before it
// sets `published` (releasing) and signals `wake`, and never again; the helper reads them only after
// it waited on `wake`. A group runs on the one thread that claimed it from `next`, which then sets its
// `done` flag (releasing); a reader of that group's results waits for the flag (acquiring). The
// caller returns from `finish()` only once every flag is set, so no group runs after the batch ends.
@usableFromInline package final class SharedGroups: @unchecked Sendable {
  /// Items per group.
  package static let groupSize = 16
  /// Items from which a batch's work is shared with a helper thread.
  @usableFromInline package static let minimumItems = 64
  /// How long the helper spins for the work before it sleeps (a batch of 1,000 entries is
  /// encoded in well under a millisecond).
  static let helperSpin: UInt64 = 1_000_000

  /// Whether this machine has a core for the helper.
  package static let hasSecondCore = ProcessInfo.processInfo.activeProcessorCount > 1

  private var work: ((Int) -> Void)?
  private var groupCount = 0
  private var done: UnsafeMutablePointer<Atomic<Bool>>?
  /// Whether the caller has published the work (or abandoned it): its thread's only.
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
  }

  /// Shared work with its helper thread started, for a batch of `items` items; `nil` when the batch
  /// is done on the calling thread alone (fewer than ``minimumItems``, or a machine with one core).
  @usableFromInline package static func start(items: Int) -> SharedGroups? {
    guard items >= minimumItems, hasSecondCore else { return nil }
    let shared = SharedGroups()
    DispatchQueue.global().async { shared.help() }
    return shared
  }

  /// Releases `value` on a helper thread (on this one when the machine has one core): for a batch's
  /// buffers, whose freeing would otherwise hold up the caller. The caller must hold no other reference.
  @usableFromInline package static func releaseOnHelper(_ value: consuming some Sendable) {
    guard hasSecondCore else { return }
    let value = value
    DispatchQueue.global().async { withExtendedLifetime(value) {} }
  }

  /// The number of groups `items` items make.
  @usableFromInline package static func groups(of items: Int) -> Int { (items + groupSize - 1) / groupSize }

  /// The items of `group`, among `items` items.
  @usableFromInline package static func items(of group: Int, among items: Int) -> Range<Int> {
    (group * groupSize)..<min(items, (group + 1) * groupSize)
  }

  /// The helper: waits for the work, then runs groups until none is left.
  private func help() {
    _ = OpeningWorker.spin(for: Self.helperSpin) { published.load(ordering: .acquiring) }
    wake.wait()
    while runNext() {}
  }

  /// Hands the helper `groups` groups of work: `work(group)` runs each, once, on either thread.
  @usableFromInline package func publish(groups: Int, _ work: @escaping (Int) -> Void) {
    precondition(!isPublished, "the work is published once")
    self.work = work
    groupCount = groups
    done = .allocate(capacity: groups)
    for group in 0..<groups { (done! + group).initialize(to: Atomic(false)) }
    release()
  }

  /// Lets the helper go without work (the caller's batch failed before it was ready); nothing
  /// once the work was published.
  package func abandon() {
    guard !isPublished else { return }
    release()
  }

  private func release() {
    isPublished = true
    published.store(true, ordering: .releasing)
    wake.signal()
  }

  /// Runs the next group no thread has claimed yet; `false` when none is left.
  @discardableResult
  package func runNext() -> Bool {
    let group = next.add(1, ordering: .relaxed).oldValue
    guard group < groupCount else { return false }
    run(group)
    return true
  }

  /// Runs the next group no thread has claimed yet if it is below `limit`; `false` when none is
  /// (for a caller that must not run the later groups, which may wait for it).
  func runNext(below limit: Int) -> Bool {
    var group = next.load(ordering: .relaxed)
    while group < min(limit, groupCount) {
      let (claimed, current) = next.compareExchange(expected: group, desired: group + 1, ordering: .relaxed)
      if claimed {
        run(group)
        return true
      }
      group = current
    }
    return false
  }

  private func run(_ group: Int) {
    work!(group)
    done![group].store(true, ordering: .releasing)
  }

  /// Whether `group` has run (its results may be read).
  package func isDone(_ group: Int) -> Bool { done![group].load(ordering: .acquiring) }

  /// Runs the groups left, then waits for the helper's: every group has run when this returns.
  @usableFromInline package func finish() {
    while runNext() {}
    for group in 0..<groupCount {
      while !isDone(group) { sched_yield() }
    }
  }
}
