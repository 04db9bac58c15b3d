import Dispatch
import Foundation
import Observation
import Synchronization

/// Something that derives what it shows from a root store's state and checks,
/// when the root announces a change, whether its own part changed.
protocol ObservationChild: AnyObject, Sendable {
  /// Called where the root delivers its notifications, after the root's own announcement.
  func rootChanged()
}

/// The root store's observable children (scoped stores at any depth), held weakly.
final class ObservationChildren: Sendable {
  private struct Entry {
    weak var child: (any ObservationChild)?
  }

  private let entries = Mutex<[Entry]>([])

  /// Adds `child`; it is dropped once released.
  func add(_ child: any ObservationChild) {
    entries.withLock { entries in
      entries.removeAll { $0.child == nil }
      entries.append(Entry(child: child))
    }
  }

  /// Whether no child was ever added (or every one added was dropped).
  var isEmpty: Bool { entries.withLock { $0.isEmpty } }

  /// Lets every living child check its part.
  func rootChanged() {
    let children = entries.withLock { entries in
      entries.removeAll { $0.child == nil }
      return entries.compactMap(\.child)
    }
    for child in children { child.rootChanged() }
  }
}
