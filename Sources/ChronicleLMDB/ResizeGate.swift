#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A readers–writer lock that keeps map resizes away from open transactions.
///
/// `mdb_env_set_mapsize` may only be called while no transaction is open in
/// the process. Every transaction holds the gate shared for its whole life;
/// a resize (or closing the environment) holds it exclusively.
final class ResizeGate: @unchecked Sendable {
  // Sound: the pthread rwlock is heap-allocated once, never moved, and only
  // touched through pthread calls, which are thread-safe by contract.
  private let lock: UnsafeMutablePointer<pthread_rwlock_t>

  init() {
    lock = .allocate(capacity: 1)
    lock.initialize(to: pthread_rwlock_t())
    pthread_rwlock_init(lock, nil)
  }

  deinit {
    pthread_rwlock_destroy(lock)
    lock.deallocate()
  }

  func shared<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_rwlock_rdlock(lock)
    defer { pthread_rwlock_unlock(lock) }
    return try body()
  }

  func exclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
    pthread_rwlock_wrlock(lock)
    defer { pthread_rwlock_unlock(lock) }
    return try body()
  }
}
