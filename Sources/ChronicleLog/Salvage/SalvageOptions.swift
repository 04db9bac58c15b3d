import Foundation
import ChronicleLMDB

/// How a salvage runs, so that a parent process can resume one whose child was killed by a damaged page.
package struct SalvageOptions: Sendable, Hashable, Codable {
  /// Entries per committed transaction in the new log.
  package var batchSize = 4096
  /// Whether to read the damaged log's last sequence number (a parent whose earlier child died doing it says no).
  package var readsSourceHead = true
  /// Whether to copy entries (a parent whose earlier child died reading one says no).
  package var copiesEntries = true
  /// Snapshots not to read, with the reason they are lost.
  package var skippedSnapshots: [UInt64: String] = [:]

  package init() {}
}
