import ChronicleLMDB
import Synchronization

/// When a writer checks the reader table while it appends: after this many commits, this
/// many appended bytes, or this much time since the last check, whichever comes first.
public enum ReaderCheckPolicy {
  /// Commits between checks.
  public static let commits = 32
  /// Appended bytes (entry values) between checks.
  public static let bytes = 1 << 20
  /// Time between checks, counted when a commit happens (an idle writer grows nothing).
  public static let interval = Duration.milliseconds(100)
}
