#if Postgres
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - A private PostgreSQL cluster

/// A PostgreSQL cluster of the demo's own: `initdb` into a temporary directory, started on a free
/// loopback port (its Unix socket in that directory) with password authentication over TCP,
/// stopped and removed by ``remove()``. PostgreSQL refuses to run as root: as root, the cluster
/// runs as the system user `chronicle-pg` (tools/setup-tests creates it).
///
/// A small version of the ChroniclePostgres tests' `PostgresServer`, which needs Swift Testing.
struct Cluster: Sendable {
  /// The temporary directory: `data/`, the server's log, its Unix socket.
  let directory: String
  /// The loopback TCP port.
  let port: Int
  /// The superuser `postgres`'s password.
  let password: String

  /// The user the cluster runs as when the demo runs as root.
  static let systemUser = "chronicle-pg"

  /// The directories of the started clusters, stopped and removed at exit or on an interrupt.
  private static let started = Mutex<[String]>([])

  /// Where PostgreSQL's server programs are: `CHRONICLE_PG_BINDIR`, else a directory of `PATH`
  /// holding `initdb`, else Debian's newest `/usr/lib/postgresql/N/bin`; `nil` when none does.
  static let binaries: String? = {
    func holdsServer(_ directory: String) -> Bool {
      ["initdb", "pg_ctl", "postgres"].allSatisfy { FileManager.default.isExecutableFile(atPath: directory + "/" + $0) }
    }
    var candidates: [String] = []
    if let configured = ProcessInfo.processInfo.environment["CHRONICLE_PG_BINDIR"] { candidates.append(configured) }
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
      candidates.append(String(directory))
    }
    let debian = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
    for version in debian.compactMap(Int.init).sorted(by: >) { candidates.append("/usr/lib/postgresql/\(version)/bin") }
    return candidates.first(where: holdsServer)
  }()

  /// Creates and starts a cluster.
  ///
  /// - Throws: ``DemoError`` saying what to do when PostgreSQL is not installed, or what failed.
  static func start() throws -> Cluster {
    guard let binaries else {
      throw DemoError(
        "PostgreSQL's server programs (initdb, pg_ctl) are not installed: run tools/setup-tests (or pass --server postgres://…)")
    }
    var owner: (uid: uid_t, gid: gid_t)?
    if getuid() == 0 {
      guard let user = getpwnam(systemUser) else {
        throw DemoError("PostgreSQL does not run as root and there is no user \(systemUser): run tools/setup-tests")
      }
      owner = (user.pointee.pw_uid, user.pointee.pw_gid)
    }
    let directory = FileManager.default.temporaryDirectory.path + "/chronicle-sync-demo-pg-" + String(UUID().uuidString.prefix(8))
    let password = UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    started.withLock { $0.append(directory) }
    try (password + "\n").write(toFile: directory + "/password", atomically: true, encoding: .utf8)
    if let owner {
      for path in [directory, directory + "/password"] where chown(path, owner.uid, owner.gid) != 0 {
        throw DemoError("cannot give \(path) to \(systemUser): errno \(errno)")
      }
    }
    try run(
      binaries + "/initdb", "-D", directory + "/data", "-U", "postgres", "--pwfile=\(directory)/password",
      "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync")
    var lastError: (any Error)?
    for _ in 0..<5 {
      let port = try freePort()
      do {
        try run(
          binaries + "/pg_ctl", "start", "-w", "-t", "60", "-D", directory + "/data", "-l", directory + "/server.log",
          "-o", "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory) -c fsync=off")
        return Cluster(directory: directory, port: port, password: password)
      } catch {
        lastError = error
      }
    }
    throw lastError ?? DemoError("pg_ctl could not start the cluster")
  }

  /// Stops the cluster (`pg_ctl stop -m fast`) and removes its directory.
  func remove() {
    Self.stopAndRemove(directory, mode: "fast")
    Self.started.withLock { $0.removeAll { $0 == directory } }
  }

  /// Stops and removes every started cluster: at an interrupt, where `defer` does not run.
  static func removeAll() {
    for directory in started.withLock({ $0 }) { stopAndRemove(directory, mode: "immediate") }
  }

  private static func stopAndRemove(_ directory: String, mode: String) {
    if let binaries, FileManager.default.fileExists(atPath: directory + "/data/postmaster.pid") {
      _ = try? run(binaries + "/pg_ctl", "stop", "-m", mode, "-w", "-D", directory + "/data")
    }
    try? FileManager.default.removeItem(atPath: directory)
  }

  // MARK: Processes

  /// `posix_spawn_file_actions_addclosefrom_np`, looked up at run time.
  private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

  /// Runs `arguments` (as ``systemUser`` when the demo runs as root) to its end.
  ///
  /// Spawned and reaped here rather than with Foundation's `Process`, which reports a child as
  /// running while a process it started (the server `pg_ctl` starts) holds a descriptor it
  /// inherited. The child's output goes to a file, and into the error if it fails.
  @discardableResult
  static func run(_ arguments: String...) throws -> String {
    let command = getuid() == 0 ? ["/usr/sbin/runuser", "-u", systemUser, "--"] + arguments : arguments
    let outputPath = FileManager.default.temporaryDirectory.path + "/chronicle-sync-demo-out-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    // The server must not inherit the demo's descriptors (glibc 2.34 and later).
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
      _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o666)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
    guard spawned == 0 else { throw DemoError("cannot start \(command[0]): errno \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { throw DemoError("waitpid for \(command[0]) failed: errno \(errno)") }
    }
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    guard status == 0 else {
      let name = URL(fileURLWithPath: arguments[0]).lastPathComponent
      let said = output.split(separator: "\n").last.map { ": \($0)" } ?? ""
      throw DemoError("\(name) failed\(said)")
    }
    return output
  }

  /// A loopback TCP port nothing listens on now.
  private static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw DemoError("socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw DemoError("bind() failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw DemoError("getsockname() failed: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }
}

/// What stopped the demo, in one sentence.
struct DemoError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
#endif  // Postgres
