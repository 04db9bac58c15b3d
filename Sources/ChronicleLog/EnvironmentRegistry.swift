import LMDB
import Synchronization

/// One LMDB environment per log directory per process.
///
/// LMDB's locks are per file descriptor: a second environment on the same
/// files would, when closed, drop the first one's locks. Every ``ActionLog``
/// of a directory in this process shares one environment, closed when the
/// last of them closes.
enum EnvironmentRegistry {
  private struct Slot {
    var environment: Environment
    var users: Int
  }

  private static let slots = Mutex<[String: Slot]>([:])

  /// The environment at `path`, opened with `configuration` if this process has none yet.
  static func acquire(path: String, configuration: Environment.Configuration) throws(LogError) -> Environment {
    try slots.withLock { slots throws(LogError) -> Environment in
      if var slot = slots[path] {
        if slot.environment.isReadOnly && !configuration.flags.contains(.readOnly) {
          throw .readOnly(path: path)
        }
        slot.users += 1
        slots[path] = slot
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
      slots[path] = Slot(environment: environment, users: 1)
      return environment
    }
  }

  /// Gives back an environment from ``acquire(path:configuration:)``; the last user closes it.
  static func release(path: String) {
    let closing: Environment? = slots.withLock { slots in
      guard var slot = slots[path] else { return nil }
      slot.users -= 1
      if slot.users > 0 {
        slots[path] = slot
        return nil
      }
      slots[path] = nil
      return slot.environment
    }
    closing?.close()
  }
}
