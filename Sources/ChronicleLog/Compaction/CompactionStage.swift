import Foundation
import ChronicleLMDB

/// The steps of a compaction, for progress reports.
public enum CompactionStage: String, Sendable, Hashable, CaseIterable {
  /// Checking the whole log before anything is changed.
  case verifying
  /// Writing and reading back the archive.
  case archiving
  /// Removing the entries in one transaction.
  case cutting
  /// Rewriting the data file without free pages.
  case rewriting
}
