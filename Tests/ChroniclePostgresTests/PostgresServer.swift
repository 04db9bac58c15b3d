import Foundation
import PostgresNIO
import Synchronization
import Testing

// MARK: - A private PostgreSQL cluster

/// A PostgreSQL 15 cluster of this test process: `initdb` into a temporary directory, started once
/// (on a free loopback port, its Unix socket in that directory) by the first test that asks,
/// stopped (`pg_ctl stop -m fast`) and removed when the process exits. Each test gets its own
/// database from ``makeDatabase()``, so tests stay independent.
///
/// PostgreSQL refuses to run as root: when the tests run as root, the cluster runs as the system
/// user `chronicle-pg` (tools/setup-tests creates it). A cluster left by a test process that
/// died is stopped and removed by the next run.
actor PostgresServer {
  /// The cluster the tests share. A test that stops its server makes a ``PostgresServer()`` of its own.
  static let shared = PostgresServer()

  /// Where PostgreSQL's server programs are: `CHRONICLE_PG_BINDIR`, else what `pg_config --bindir`
  /// says, else the directory of an `initdb` on `PATH`, else Debian's newest
  /// `/usr/lib/postgresql/N/bin`; `nil` when none holds `initdb` and `pg_ctl` (the suites that
  /// need a server are then skipped, saying so).
  static let binaries: String? = {
    func holdsServer(_ directory: String) -> Bool {
      ["initdb", "pg_ctl", "postgres", "psql"].allSatisfy { FileManager.default.isExecutableFile(atPath: directory + "/" + $0) }
    }
    var candidates: [String] = []
    if let configured = ProcessInfo.processInfo.environment["CHRONICLE_PG_BINDIR"] { candidates.append(configured) }
    if let bindir = try? PostgresServer.output("pg_config", "--bindir") { candidates.append(bindir) }
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
      candidates.append(String(directory))
    }
    let debian = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
    for version in debian.compactMap(Int.init).sorted(by: >) { candidates.append("/usr/lib/postgresql/\(version)/bin") }
    return candidates.first(where: holdsServer)
  }()
  /// The path of PostgreSQL's program `name` (in ``binaries``).
  static func program(_ name: String) -> String { (binaries ?? "") + "/" + name }

  /// What `arguments` (found on `PATH`) print, trimmed; throws when it cannot run or fails.
  static func output(_ arguments: String...) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ServerError("\(arguments[0]) exited with \(process.terminationStatus)") }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Why the suites that need a server are skipped when ``binaries`` is `nil`.
  static let unavailable =
    "needs PostgreSQL's server programs (initdb, pg_ctl): install them (tools/setup-tests), or set CHRONICLE_PG_BINDIR"
  /// The superuser's password (password authentication over TCP, trust over the Unix socket).
  static let password = "chronicle-tests"
  /// The user the cluster runs as when the tests run as root.
  static let systemUser = "chronicle-pg"
  /// The prefix of the clusters' temporary directories.
  static let prefix = "chronicle-pg-"

  /// A started cluster.
  struct Cluster: Sendable {
    /// The temporary directory: `data/`, the server's log, its Unix socket.
    var directory: String
    /// The loopback TCP port.
    var port: Int
    var data: String { directory + "/data" }
  }

  private var cluster: Cluster?

  /// The cluster, started on first use.
  func start() throws -> Cluster {
    if let cluster { return cluster }
    guard Self.binaries != nil else { throw ServerError("the tests \(Self.unavailable)") }
    Self.removeAbandonedClusters()
    let directory = FileManager.default.temporaryDirectory.path + "/" + Self.prefix + String(UUID().uuidString.prefix(8))
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    try "\(getpid())\n".write(toFile: directory + "/owner.pid", atomically: true, encoding: .utf8)
    try (Self.password + "\n").write(toFile: directory + "/password", atomically: true, encoding: .utf8)
    try Self.giveToServerUser(directory)
    ClusterCleanup.register(directory)
    try Self.run(
      Self.program("initdb"), "-D", directory + "/data", "-U", "postgres", "--pwfile=\(directory)/password",
      "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync")
    var lastError: Error?
    for _ in 0..<5 {
      let port = try Self.freePort()
      do {
        try Self.startServer(directory: directory, port: port)
        let started = Cluster(directory: directory, port: port)
        cluster = started
        return started
      } catch {
        lastError = error
      }
    }
    throw lastError ?? ServerError("pg_ctl start failed")
  }

  /// Runs `pg_ctl start` for the cluster in `directory` on `port` and waits until it accepts connections.
  private static func startServer(directory: String, port: Int) throws {
    try run(
      program("pg_ctl"), "start", "-w", "-t", "60", "-D", directory + "/data", "-l", directory + "/server.log",
      "-o",
      "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory) -c fsync=off -c full_page_writes=off "
        + "-c max_connections=200")
  }

  /// Stops the started cluster with `pg_ctl stop -m immediate`, as a crash of the server would:
  /// connections break, transactions in flight are lost, the data stays for ``restart()``.
  func crash() throws {
    guard let cluster else { throw ServerError("the cluster is not started") }
    try Self.run(Self.program("pg_ctl"), "stop", "-m", "immediate", "-w", "-D", cluster.data)
  }

  /// Starts the cluster again after ``crash()``, on the same port (the server recovers from its WAL).
  func restart() throws {
    guard let cluster else { throw ServerError("the cluster is not started") }
    try Self.startServer(directory: cluster.directory, port: cluster.port)
  }

  /// Stops the cluster (`pg_ctl stop -m fast`) and removes its directory.
  func shutDown() {
    guard let cluster else { return }
    ClusterCleanup.stopAndRemove(cluster.directory, mode: "fast")
    self.cluster = nil
  }

  /// A database of the cluster.
  struct Database: Sendable {
    /// Its name.
    var name: String
    /// The cluster's loopback port.
    var port: Int
    /// A client configuration for it (TCP, password authentication as `postgres`).
    var configuration: PostgresClient.Configuration { PostgresServer.configuration(port: port, database: name) }
  }

  /// A new, empty database of the cluster.
  func makeDatabase() throws -> Database {
    let cluster = try start()
    let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    try Self.run(
      Self.program("psql"), "-X", "-q", "-h", cluster.directory, "-p", "\(cluster.port)", "-U", "postgres",
      "-d", "postgres", "-c", "CREATE DATABASE \(name)")
    return Database(name: name, port: cluster.port)
  }

  /// A client configuration for `database` over TCP with password authentication.
  static func configuration(
    port: Int, database: String, password: String = PostgresServer.password
  ) -> PostgresClient.Configuration {
    PostgresClient.Configuration(
      host: "127.0.0.1", port: port, username: "postgres", password: password, database: database, tls: .disable)
  }

  // MARK: Processes

  /// Runs `arguments` (as the server's user when the tests run as root) to its end.
  ///
  /// Spawned and reaped here (`posix_spawn`, `waitpid`) rather than with Foundation's `Process`,
  /// which reports a child as running while any process it started (the server `pg_ctl` starts)
  /// holds a descriptor it inherited. The child gets no descriptor of the test process but its
  /// standard streams; its output goes to a file.
  ///
  /// - Throws: ``ServerError`` with the program's output if it fails.
  @discardableResult
  static func run(_ arguments: String...) throws -> String {
    let command = getuid() == 0 ? ["/usr/sbin/runuser", "-u", systemUser, "--"] + arguments : arguments
    let outputPath = FileManager.default.temporaryDirectory.path + "/chronicle-pgout-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: outputPath) }
    let status = try spawnAndWait(command, output: outputPath)
    let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    guard status == 0 else {
      let name = URL(fileURLWithPath: arguments[0]).lastPathComponent
      throw ServerError("\(name) exited with \(status): \(text)")
    }
    return text
  }

  /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later), looked up at run time.
  private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

  /// Spawns `command` with standard input from /dev/null and its output in `output`; waits for it
  /// and returns its exit status (128 + the signal if a signal ended it).
  private static func spawnAndWait(_ command: [String], output: String) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
      _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o666)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let envp: [UnsafeMutablePointer<CChar>?] =
      ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in envp { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
    guard spawned == 0 else { throw ServerError("cannot start \(command[0]): errno \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { throw ServerError("waitpid for \(command[0]) failed: errno \(errno)") }
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }

  /// Hands `directory` to the server's user when the tests run as root.
  private static func giveToServerUser(_ directory: String) throws {
    guard getuid() == 0 else { return }
    guard let user = getpwnam(systemUser) else {
      throw ServerError("the tests run as root and there is no user \(systemUser): run tools/setup-tests")
    }
    for path in [directory, directory + "/owner.pid", directory + "/password"] {
      guard chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
        throw ServerError("cannot give \(path) to \(systemUser): errno \(errno)")
      }
    }
  }

  /// A loopback TCP port nothing listens on now.
  private static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ServerError("socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw ServerError("bind() failed: errno \(errno)") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw ServerError("getsockname() failed: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// Stops and removes the clusters of test processes that no longer run.
  private static func removeAbandonedClusters() {
    let temporary = FileManager.default.temporaryDirectory.path
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: temporary) else { return }
    for name in names where name.hasPrefix(prefix) {
      let directory = temporary + "/" + name
      guard let text = try? String(contentsOfFile: directory + "/owner.pid", encoding: .utf8),
        let owner = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
        kill(owner, 0) != 0, errno == ESRCH
      else { continue }
      ClusterCleanup.stopAndRemove(directory, mode: "immediate")
    }
  }
}

/// An error of the test cluster, with what the failing program said.
struct ServerError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

// MARK: - Cleanup at exit

/// Stops the process's cluster when the test process exits.
enum ClusterCleanup {
  private static let directories = Mutex<[String]>([])

  static func register(_ path: String) {
    let first = directories.withLock { current -> Bool in
      defer { current.append(path) }
      return current.isEmpty
    }
    if first { atexit { ClusterCleanup.atExit() } }
  }

  static func atExit() {
    for path in directories.withLock({ $0 }) { stopAndRemove(path, mode: "fast") }
  }

  static func stopAndRemove(_ path: String, mode: String) {
    if FileManager.default.fileExists(atPath: path + "/data/postmaster.pid") {
      _ = try? PostgresServer.run(PostgresServer.program("pg_ctl"), "stop", "-m", mode, "-w", "-D", path + "/data")
    }
    try? FileManager.default.removeItem(atPath: path)
  }
}

extension Trait where Self == ConditionTrait {
  /// Skips a suite, saying why, where PostgreSQL's server programs are not installed.
  static var needsPostgres: Self {
    .enabled(if: PostgresServer.binaries != nil, Comment(rawValue: PostgresServer.unavailable))
  }
}
