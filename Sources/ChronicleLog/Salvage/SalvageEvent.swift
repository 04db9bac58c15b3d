import Foundation
import ChronicleLMDB

/// What a salvage reports as it goes; each event follows a committed step.
package enum SalvageEvent: Sendable {
  /// The damaged log's last sequence number (`nil`: it could not be read).
  case sourceHead(UInt64?)
  /// Entries up to this one are committed in the new log.
  case committed(UInt64)
  /// The copy of entries ended, early for this reason (`nil`: at the end of the data).
  case entriesDone(String?)
  /// The snapshot at this sequence number is about to be read.
  case readingSnapshot(UInt64)
}
