import ChronicleLog
import Foundation

/// Where a store keeps its log.
public enum LogLocation: Sendable, Hashable {
  /// A log directory (created if missing). One writer per directory at a time.
  case directory(URL)
  /// A private log that vanishes on close: for previews and unit tests. It
  /// behaves exactly like a directory log (it is one, in a temporary directory).
  case inMemory
}
