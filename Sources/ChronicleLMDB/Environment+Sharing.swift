import Synchronization

// MARK: - One environment per path per process

extension Environment {
  /// Opens the environment at `path`, or shares the one this process already opened there
  /// through this method, so that the files have one environment per process.
  ///
  /// LMDB's locks are POSIX record locks: a second environment on the same files would, when
  /// closed, drop the first one's locks. Environments opened here are keyed on the files'
  /// ``FileIdentity``, so every spelling of the path (symbolic links, `..`, a trailing slash)
  /// finds the same one; each call is paired with one ``releaseShared()``, and the last
  /// release closes it.
  ///
  /// ```swift
  /// let first = try Environment.shared(path: dir, configuration: .init(maxDatabases: 4))
  /// let second = try Environment.shared(path: dir + "/", configuration: .init(maxDatabases: 4))
  /// assert(first === second)
  /// second.releaseShared()
  /// first.releaseShared()   // closes it
  /// ```
  ///
  /// - Parameters:
  ///   - path: the environment's directory.
  ///   - configuration: how to open it, if this call opens it.
  ///   - readerGate: its gate, if this call opens it (see ``init(path:configuration:readerGate:)``).
  /// - Throws: `LMDBError` with code ``LMDBError/Code/sharedReadOnly`` when this process holds the
  ///   files open read-only and `configuration` asks for writing; `.noSuchFile` when nothing is at
  ///   `path`; any error of ``init(path:configuration:readerGate:)``.
  public static func shared(
    path: String, configuration: Configuration = Configuration(), readerGate: (any ReaderGate)? = nil
  ) throws -> Environment {
    guard let identity = FileIdentity(path: path) else {
      throw LMDBError(code: .noSuchFile, operation: "opening the environment at \(path)")
    }
    return try SharedEnvironments.slots.withLock { slots in
      if var slot = slots[identity] {
        if slot.environment.isReadOnly && !configuration.flags.contains(.readOnly) {
          throw LMDBError(
            code: .sharedReadOnly,
            message: "this process holds the environment open read-only, so it cannot also open it for writing",
            operation: "opening the environment at \(path)")
        }
        slot.users += 1
        slots[identity] = slot
        return slot.environment
      }
      let environment = try Environment(path: path, configuration: configuration, readerGate: readerGate)
      slots[identity] = SharedEnvironments.Slot(environment: environment, users: 1)
      return environment
    }
  }

  /// Gives back an environment from ``shared(path:configuration:readerGate:)``; the last user's release closes it.
  /// Does nothing for an environment not opened there.
  public func releaseShared() {
    let closing: Environment? = SharedEnvironments.slots.withLock { slots in
      guard let (identity, found) = slots.first(where: { $0.value.environment === self }) else { return nil }
      var slot = found
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

/// The environments ``Environment/shared(path:configuration:readerGate:)`` opened, with their numbers of users.
enum SharedEnvironments {
  struct Slot {
    var environment: Environment
    var users: Int
  }

  static let slots = Mutex<[FileIdentity: Slot]>([:])
}
