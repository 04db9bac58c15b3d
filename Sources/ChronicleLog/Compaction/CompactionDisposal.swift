import Foundation
import ChronicleLMDB

/// What happens to the entries a compaction removes from the log.
public enum CompactionDisposal: Sendable, Hashable {
  /// Written first to this export file (synced and read back), then removed.
  /// The file must not exist, unless it is the complete archive of this very cut
  /// left by an interrupted earlier run, which is then reused.
  case archive(URL)
  /// Removed without a copy: the explicit choice to lose them.
  case discard
}
