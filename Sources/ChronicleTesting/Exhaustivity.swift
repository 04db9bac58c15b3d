import Chronicle
import Synchronization

/// How strictly a ``TestStore`` checks.
///
/// ```swift
/// store.exhaustivity = .off
/// await store.send(.login(user)) { $0.isLoggedIn = true }   // other fields not checked
/// await store.receive(.profileLoaded(profile))              // earlier actions skipped
/// ```
public enum Exhaustivity: Sendable, Hashable {
  /// Every change must be asserted: a `send` or `receive` closure must describe
  /// the whole change, every action sent back must be received, and effects
  /// must be done at `finish()`.
  case on
  /// Only what the test asserts is checked: the assertion closure runs on the
  /// actual new state, so only the fields it sets are compared (assign values,
  /// do not increment); `receive` skips actions until one matches; unreceived
  /// actions and running effects are no failure.
  case off
}
