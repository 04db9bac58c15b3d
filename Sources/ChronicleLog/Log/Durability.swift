import Foundation
import ChronicleLMDB
import Synchronization

/// When a committed entry reaches the disk.
public enum Durability: Sendable, Hashable {
  /// Every commit is fsync'ed before the append returns: survives power loss.
  case full
  /// Every append commits its own transaction without fsync: survives a process
  /// crash (`kill -9`) with nothing acknowledged lost; a power loss may lose the
  /// last moments (bounded by the background flush), never corrupt the log.
  case normal
}
