import LMDB
import Synchronization

/// One LMDB environment per log directory per process.
///
/// LMDB's locks are POSIX record locks: a second environment on the same
/// files would, when closed, drop the first one's locks. Every ``ActionLog``
/// of a directory in this process shares one environment, closed when the
/// last of them closes. The registry keys on the directory's device and inode,
/// so every spelling of its path (symbolic links, `..`, a trailing slash)
/// finds the same environment.
enum EnvironmentRegistry {
  private struct Slot {
    var environment: Environment
    var users: Int
  }

  private static let slots = Mutex<[LogDirectory.Identity: Slot]>([:])

  /// The environment of the log directory `identity` at `path`, opened with `configuration` if this process has none yet.
  static func acquire(
    path: String, identity: LogDirectory.Identity, configuration: Environment.Configuration
  ) throws(LogError) -> Environment {
    try slots.withLock { slots throws(LogError) -> Environment in
      if var slot = slots[identity] {
        if slot.environment.isReadOnly && !configuration.flags.contains(.readOnly) {
          throw .readOnly(path: path)
        }
        slot.users += 1
        slots[identity] = slot
        return slot.environment
      }
      let environment: Environment
      do {
        environment = try Environment(path: path, configuration: configuration)
      } catch let error as LMDBError {
        switch error.code {
        case .invalid, .versionMismatch, .corrupted:
          throw .notALog(path: path, reason: "data.mdb is not a readable LMDB file (\(error.message))")
        case .permissionDenied:
          throw .permissionDenied(path: path, operation: "opening")
        default:
          throw .storage(error)
        }
      } catch {
        throw .invalidEntry(reason: "\(error)")
      }
      slots[identity] = Slot(environment: environment, users: 1)
      return environment
    }
  }

  /// Gives back an environment from ``acquire(path:identity:configuration:)``; the last user closes it.
  static func release(identity: LogDirectory.Identity) {
    let closing: Environment? = slots.withLock { slots in
      guard var slot = slots[identity] else { return nil }
      slot.users -= 1
      if slot.users > 0 {
        slots[identity] = slot
        return nil
      }
      slots[identity] = nil
      return slot.environment
    }
    closing?.close()
  }
}
