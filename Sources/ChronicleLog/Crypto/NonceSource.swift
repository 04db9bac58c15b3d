#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import Synchronization

// MARK: - Nonces

/// The source of the records' nonces: bytes of a secure random generator (`fill(_:)`), drawn
/// ``refillSize`` at a time and handed out 12 at a time, each byte once.
///
/// Drawing every nonce on its own cost two system calls per record (`SystemRandomNumberGenerator`
/// asks the kernel for each 8 bytes). A nonce needs to be unique, not secret (it is stored in the
/// clear next to its ciphertext), so holding the next ones in memory reveals nothing. What would
/// break uniqueness is a forked child handing out the bytes its parent also hands out: a fork
/// handler (`pthread_atfork`) counts forks in the child, and the buffer is dropped when the count
/// differs from the one it was filled under. (Asking `getpid()` for every nonce cost a system call
/// per record again.)
enum NonceSource {
  /// Bytes drawn from the system at once.
  static let refillSize = 4_096

  private struct Pool {
    var bytes = [UInt8](repeating: 0, count: NonceSource.refillSize)
    /// The next unused byte; `bytes.count` when none is left.
    var next = NonceSource.refillSize
    /// The fork count `bytes` was filled under.
    var generation: UInt64 = .max
  }

  private static let pool = Mutex(Pool())
  /// Forks this process went through as their child (counted by the handler ``forkHandler`` installs).
  private static let forks = Atomic<UInt64>(0)
  /// Installs the fork handler, once, on first use.
  private static let forkHandler: Void = {
    _ = pthread_atfork(nil, nil) { NonceSource.forks.add(1, ordering: .relaxed) }
  }()

  /// A fresh random nonce of ``RecordCipher/nonceSize`` bytes, written into `writer`.
  static func append(to writer: inout ByteWriter) {
    withUnsafeTemporaryAllocation(byteCount: RecordCipher.nonceSize, alignment: 1) { nonce in
      write(to: nonce.baseAddress!)
      writer.bytes.append(contentsOf: UnsafeRawBufferPointer(nonce))
    }
  }

  /// A fresh random nonce of ``RecordCipher/nonceSize`` bytes, written at `destination`.
  static func write(to destination: UnsafeMutableRawPointer) {
    let size = RecordCipher.nonceSize
    _ = forkHandler
    let generation = forks.load(ordering: .relaxed)
    pool.withLock { pool in
      if pool.next + size > pool.bytes.count || pool.generation != generation {
        pool.bytes.withUnsafeMutableBytes { fill($0) }
        pool.next = 0
        pool.generation = generation
      }
      pool.bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + pool.next, byteCount: size) }
      pool.next += size
    }
  }

  /// Fills `buffer` from a secure random generator: the system's on Apple platforms, elsewhere the
  /// kernel's (`/dev/urandom`, the whole buffer in one read).
  private static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
    #if canImport(Darwin)
      arc4random_buf(buffer.baseAddress!, buffer.count)
    #else
      // /dev/urandom: the kernel's generator (getrandom(2) is not visible to Swift through Glibc).
      var filled = 0
      let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
      if descriptor >= 0 {
        defer { close(descriptor) }
        while filled < buffer.count {
          let count = read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
          if count > 0 {
            filled += count
          } else if count == 0 || errno != EINTR {
            break
          }
        }
      }
      // Without /dev/urandom (a sandbox, a chroot): the standard library's generator, 8 bytes a call.
      var generator = SystemRandomNumberGenerator()
      while filled < buffer.count {
        withUnsafeBytes(of: generator.next() as UInt64) { random in
          let count = min(random.count, buffer.count - filled)
          UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + count)]).copyMemory(
            from: UnsafeRawBufferPointer(rebasing: random[..<count]))
          filled += count
        }
      }
    #endif
  }
}
