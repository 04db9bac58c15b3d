import ChronicleLog
import Foundation
import Synchronization

/// Stops a scan early when the caller has seen enough.
@usableFromInline struct FoldStop: Error {
  @usableFromInline init() {}
}

/// A range to fold from a base, with its jumps planned.
@usableFromInline struct FoldSegment<State> {
  @usableFromInline var base: UndoCursor<State>
  @usableFromInline var through: UInt64
  @usableFromInline var plan: JumpPlan
  /// The seqs (from the base up) whose states a fold above this one needs.
  @usableFromInline var exports: Set<UInt64> = []

  @usableFromInline
  init(base: UndoCursor<State>, through: UInt64, plan: JumpPlan) {
    self.base = base
    self.through = through
    self.plan = plan
  }
}
