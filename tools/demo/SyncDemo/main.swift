// The shared-stream demo: two devices, ann and bob, keep one ledger through PostgreSQL; bob goes
// offline, both keep working, and his conflicting withdrawal is refused when he comes back.
//
//   swift run --traits Postgres chronicle-sync-demo           with a private PostgreSQL cluster, removed at the end
//   swift run --traits Postgres chronicle-sync-demo --keep    the same, keeping the devices' directories
//   chronicle-sync-demo --server postgres://USER:PASSWORD@HOST:PORT/DATABASE   with that server (as its schema's owner)
#if Postgres
import Chronicle
import ChroniclePostgres
import Foundation
import PostgresNIO
import Synchronization

typealias LedgerStore = SharedStore<Ledger.State, Ledger.Action>

let usage = """
  usage: chronicle-sync-demo [--keep] [--server postgres://USER:PASSWORD@HOST:PORT/DATABASE]

  Two devices, ann and bob, share the stream "ledger" through PostgreSQL: a private cluster
  started for the demo and removed at the end, or the server given (its user creates the stream and
  registers the devices; no TLS). The devices' directories go to a temporary directory, removed at
  the end unless --keep is given.
  """

struct Arguments {
  var keep = false
  var server: String?
}

/// The command line; a usage error is one line and exit 1.
func parseArguments() -> Arguments {
  var arguments = Arguments()
  var rest = CommandLine.arguments.dropFirst()
  while let argument = rest.popFirst() {
    switch argument {
    case "--keep": arguments.keep = true
    case "--server" where !rest.isEmpty: arguments.server = rest.popFirst()
    case "-h", "--help":
      print(usage)
      exit(0)
    default:
      let line = "chronicle-sync-demo: unexpected '\(argument)' (usage: chronicle-sync-demo [--keep] [--server postgres://…])"
      FileHandle.standardError.write(Data((line + "\n").utf8))
      exit(1)
    }
  }
  return arguments
}

/// A client configuration from `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (the password may
/// come from `PGPASSWORD`, the database defaults to the user's name).
func configuration(_ url: String) throws -> PostgresClient.Configuration {
  guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme),
    let host = parts.host, !host.isEmpty, let user = parts.user, !user.isEmpty
  else { throw DemoError("--server takes postgres://USER:PASSWORD@HOST:PORT/DATABASE, not '\(url)'") }
  let database = parts.path.drop { $0 == "/" }
  return PostgresClient.Configuration(
    host: host, port: parts.port ?? 5432, username: user,
    password: parts.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"],
    database: database.isEmpty ? user : String(database), tls: .disable)
}

// MARK: - Devices

/// The last error a device's continuous sync reported, for the message of a step that timed out.
final class LastError: Sendable {
  private let text = Mutex<String?>(nil)
  func record(_ error: any Error) { text.withLock { $0 = LogShipper.describe(error) } }
  var value: String? { text.withLock { $0 } }
}

/// One device: its shared store, its own connection to the server, its sync task while online.
@MainActor final class Device {
  let name: String
  let store: LedgerStore
  let server: PostgresStreamServer
  let lastError = LastError()
  private var syncing: Task<Void, Never>?

  init(_ name: String, directory: URL, stream: SharedStream, client: PostgresClient, serverName: String) throws {
    self.name = name
    store = try LedgerStore(
      initialState: Ledger.State(), reducer: Ledger(), directory: directory, stream: stream, device: name,
      validators: [Ledger.noOverdraft])
    server = PostgresStreamServer(client: client, stream: stream, options: .init(serverName: serverName))
  }

  /// Syncs continuously: a round at once, then one whenever the server announces entries or the device sends.
  func goOnline() {
    let (store, server, lastError) = (store, server, lastError)
    syncing = Task { await store.syncContinuously(with: server, onError: { lastError.record($0) }) }
  }

  /// Stops syncing: the device keeps working on its own.
  func goOffline() async {
    syncing?.cancel()
    await syncing?.value
    syncing = nil
  }

  /// Stops syncing, closes the store and the server's listening connection.
  func close() async {
    await goOffline()
    try? store.close()
    await server.close()
  }

  var balance: Int { store.state.balances[account] ?? 0 }
}

/// The account both devices draw on.
let account = "petty cash"

/// A value set on the main actor by an observer.
@MainActor final class Box<Value> {
  var value: Value?
}

/// Waits until `condition` holds, checking every millisecond on the main actor (where the stores'
/// observers run); throws after `seconds`, with the devices' last sync errors.
@MainActor func wait(for what: String, seconds: Int = 20, devices: [Device], until condition: () -> Bool) async throws {
  let deadline = ContinuousClock.now + .seconds(seconds)
  while !condition() {
    guard ContinuousClock.now < deadline else {
      let errors = devices.compactMap { device in device.lastError.value.map { "\(device.name): \($0)" } }
      throw DemoError(
        "\(what) did not happen within \(seconds) s" + (errors.isEmpty ? "" : " (\(errors.joined(separator: "; ")))"))
    }
    try await Task.sleep(for: .milliseconds(1))
  }
}

func heading(_ text: String) { print("\n== \(text)") }

/// `7f3a9c1e…`
func short(_ bytes: [UInt8]) -> String { bytes.prefix(4).map { String(format: "%02x", $0) }.joined() + "…" }

/// `3.4 ms`
func milliseconds(_ duration: Duration) -> String {
  let (seconds, attoseconds) = duration.components
  return String(format: "%.1f ms", Double(seconds) * 1_000 + Double(attoseconds) / 1e15)
}

// MARK: - The demo

/// What the demo holds open, closed by ``close()`` whether it ends well or not.
@MainActor final class Session {
  var cluster: Cluster?
  var clients: [Task<Void, Never>] = []
  var devices: [Device] = []

  /// A running client for `configuration`.
  func connect(_ configuration: PostgresClient.Configuration) -> PostgresClient {
    let client = PostgresClient(configuration: configuration, backgroundLogger: .quiet)
    clients.append(Task { await client.run() })
    return client
  }

  func close() async {
    for device in devices { await device.close() }
    devices = []
    for client in clients { client.cancel() }
    for client in clients { await client.value }
    clients = []
    cluster?.remove()
    cluster = nil
  }
}

/// Creates the Chronicle schema and `stream` on `server` (within 10 seconds), and registers
/// `devices` for the owner's role or, with `rolesOfTheirOwn`, each for a new role of its name (as
/// a deployment would: a device appends only as itself); returns each device's client configuration.
func setUp(
  _ stream: SharedStream, devices: [String], on server: String, owner: PostgresClient.Configuration,
  client: PostgresClient, rolesOfTheirOwn: Bool
) async throws -> [String: PostgresClient.Configuration] {
  let step = "setting up the stream \"\(stream.name)\" on \(server)"
  do {
    return try await withServerDeadline(.seconds(10), step) {
      try await PostgresSchema.migrate(client)
      try await PostgresStreamServer.createStream(stream, encrypted: false, on: client)
      var configurations: [String: PostgresClient.Configuration] = [:]
      for device in devices {
        var configuration = owner
        if rolesOfTheirOwn {
          configuration.username = device
          configuration.password = UUID().uuidString
          try await client.query(
            PostgresQuery(unsafeSQL: "CREATE ROLE \(device) LOGIN PASSWORD '\(configuration.password!)'"),
            logger: .quiet)
        }
        try await PostgresStreamServer.registerDevice(device, role: configuration.username, in: stream, on: client)
        configurations[device] = configuration
      }
      return configurations
    }
  } catch let error as ServerTimedOut {
    throw DemoError(error.description)
  } catch {
    throw DemoError("\(step): \(LogShipper.describe(error))")
  }
}

extension Logger {
  /// A logger that says nothing: the demo's errors reach its one line anyway.
  static let quiet: Logger = {
    var logger = Logger(label: "chronicle-sync-demo")
    logger.logLevel = .critical
    return logger
  }()
}

@MainActor func demo(_ arguments: Arguments, directory: URL, session: Session) async throws {
  print("Chronicle shared streams: ann and bob keep one ledger, in the order PostgreSQL gives it.")

  // MARK: Setup
  let owner: PostgresClient.Configuration
  let serverName: String
  if let url = arguments.server {
    owner = try configuration(url)
    serverName = "\(owner.host ?? "?"):\(owner.port ?? 5432)"
    print("PostgreSQL: \(serverName), database \(owner.database ?? "?"), as \(owner.username)")
  } else {
    let cluster = try Cluster.start()
    session.cluster = cluster
    serverName = "127.0.0.1:\(cluster.port)"
    owner = .init(
      host: "127.0.0.1", port: cluster.port, username: "postgres", password: cluster.password, database: "postgres",
      tls: .disable)
    print("PostgreSQL: a private cluster on \(serverName), removed at the end")
  }
  let admin = session.connect(owner)
  let stream = SharedStream("ledger")
  let deviceConfigurations = try await setUp(
    stream, devices: ["ann", "bob"], on: serverName, owner: owner, client: admin,
    rolesOfTheirOwn: arguments.server == nil)
  let ann = try Device(
    "ann", directory: directory.appendingPathComponent("ann"), stream: stream,
    client: session.connect(deviceConfigurations["ann"]!), serverName: serverName)
  session.devices.append(ann)
  let bob = try Device(
    "bob", directory: directory.appendingPathComponent("bob"), stream: stream,
    client: session.connect(deviceConfigurations["bob"]!), serverName: serverName)
  session.devices.append(bob)
  let roles = arguments.server == nil ? "each as a database role of its own" : "as \(owner.username)"
  print("stream \"ledger\" created; devices ann and bob registered, \(roles)")
  print("ann's copy: \(ann.store.path)")
  print("bob's copy: \(bob.store.path)")
  print(arguments.keep ? "(kept at the end: --keep)" : "(removed at the end: --keep keeps them)")
  // Catch up with what the server holds (nothing, on a new server), then listen.
  for device in [ann, bob] { try await device.store.sync(with: device.server) }
  let start = ann.store.head.seq

  // MARK: 1. Both online
  heading("1. Both online: each device hears of the other's actions at once")
  ann.goOnline()
  bob.goOnline()
  try await Task.sleep(for: .milliseconds(300))  // both listening for the server's announcements
  let deposit = 10_000
  let seen = Box<ContinuousClock.Instant>()
  let target = bob.balance + deposit
  let watching = bob.store.subscribe { new, _ in
    if seen.value == nil, new.balances[account] == target { seen.value = .now }
  }
  let sent = ContinuousClock.now
  try ann.store.send(.deposit(account: account, cents: deposit), metadata: ["for": "the month's float"])
  print("ann deposits \(money(deposit)) into \(account)")
  try await wait(for: "bob seeing ann's deposit", devices: [ann, bob]) { seen.value != nil }
  watching.cancel()
  print("bob's device shows it \(milliseconds(seen.value! - sent)) later: \(bob.store.state.summary)")

  // MARK: 2. bob offline
  heading("2. bob goes offline; both keep working")
  await bob.goOffline()
  try ann.store.send(.withdraw(account: account, cents: 7_000), metadata: ["for": "printer paper"])
  try await wait(for: "ann's withdrawal reaching the stream", devices: [ann]) {
    ann.store.pending.isEmpty && ann.store.head.seq == start + 2
  }
  print("ann withdraws \(money(7_000)) for printer paper: stream entry \(ann.store.head.seq); she sees \(money(ann.balance))")
  let bobSees = bob.balance
  let taxi = bobSees - 5_000
  try bob.store.send(.withdraw(account: account, cents: taxi), metadata: ["for": "a taxi"])
  print("bob, offline, withdraws \(money(taxi)) for a taxi: fine on the \(money(bobSees)) his device knows of")
  let pending = bob.store.pending.map { "\($0.action?.summary ?? "an undo or redo") (outbox #\($0.seq))" }
  print("bob's device shows \(bob.store.state.summary); pending: \(pending.joined(separator: ", "))")

  // MARK: 3. bob online again
  heading("3. bob comes back online: his withdrawal is rebased on ann's")
  let refused = Box<Rejection<Ledger.Action>>()
  let hearing = bob.store.onRejection { rejection in refused.value = rejection }
  bob.goOnline()
  try await wait(for: "bob hearing of his refused withdrawal", devices: [ann, bob]) { refused.value != nil }
  hearing.cancel()
  let rejection = refused.value!
  let rebased = bob.store.confirmedState.balances[account] ?? 0
  print(
    "bob's device pulls ann's withdrawal and rebases his on it: \(account) would be "
      + "\(money(rebased)) - \(money(taxi)) = \(money(rebased - taxi))")
  print("the validator refuses it, and the stream records the refusal as entry \(rejection.streamSeq)")
  print(
    "bob is told (onRejection, on the main actor): \"\(rejection.action.summary)\" for \(rejection.metadata["for"] ?? "?")"
      + " was refused: \(rejection.reason)")
  try await wait(for: "ann receiving the refusal", devices: [ann, bob]) { ann.store.head == bob.store.head }
  print("the stream on the server (entry, type, device, the database role that appended it):")
  let rows = try await admin.query(
    """
    SELECT seq, type_name, coalesce(device, ''), appended_by::text FROM chronicle.entries
    WHERE log_id = \(ByteBuffer(bytes: stream.id)) AND seq > \(Int64(start)) ORDER BY seq
    """, logger: .quiet)
  for try await (seq, type, device, role) in rows.decode((Int64, String, String, String).self) {
    print("  \(seq)  \(type.padding(toLength: 18, withPad: " ", startingAt: 0))  \(device)  \(role)")
  }
  print("bob's device shows \(bob.store.state.summary); pending: \(bob.store.pending.isEmpty ? "none" : "\(bob.store.pending.count)")")

  // MARK: 4. One history
  heading("4. One history: both copies hold the same entries, byte for byte")
  for device in [ann, bob] {
    let head = device.store.head
    print(
      "\(device.name): head \(head.seq) \(short(head.hash)), Merkle root \(short(try device.store.treeRoot())), "
        + device.store.state.summary)
  }
  guard ann.store.head == bob.store.head, try ann.store.treeRoot() == bob.store.treeRoot(),
    ann.store.state == bob.store.state
  else { throw DemoError("ann's and bob's copies differ") }
  await session.close()
  let signer = try NoteSigner.generate(name: "auditor")
  let annCopy = try ActionLog(directory: directory.appendingPathComponent("ann"))
  let note = try annCopy.signCheckpoint(with: signer)
  try annCopy.close()
  let bobCopy = try ActionLog(directory: directory.appendingPathComponent("bob"), access: .readOnly)
  let verification = try bobCopy.verify(checkpoint: note, verifier: signer.verifier)
  try bobCopy.close()
  guard verification.isValid else {
    throw DemoError("the checkpoint signed on ann's copy does not verify on bob's: \(verification)")
  }
  print("a checkpoint of the stream (\(verification.checkpoint.size) entries) signed on ann's copy verifies on bob's copy")

  if arguments.keep {
    print("\nLook at the copies (the server is gone, the copies stay):")
    print("  swift run --traits LogTool logtool sync-status \(directory.appendingPathComponent("bob").path)")
    print("  swift run --traits Inspector logtool serve \(directory.appendingPathComponent("ann").path)")
  } else {
    print("\nThe copies are removed now: run with --keep to look at them with `logtool sync-status DIR` and `logtool serve DIR`.")
  }
}

// MARK: - Main

let arguments = parseArguments()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
  "chronicle-sync-demo-\(UUID().uuidString.prefix(8))")
let keep = arguments.keep

// Ctrl-C: stop the cluster and remove what the demo made, as the end of the demo would.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let interrupts = [SIGINT, SIGTERM].map { number in
  let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
  source.setEventHandler {
    Cluster.removeAll()
    if !keep { try? FileManager.default.removeItem(at: directory) }
    FileHandle.standardError.write(Data("chronicle-sync-demo: interrupted\n".utf8))
    exit(130)
  }
  source.resume()
  return source
}

let session = Session()
var status: Int32 = 0
do {
  try await demo(arguments, directory: directory, session: session)
} catch {
  fflush(nil)
  let message = error is DemoError ? "\(error)" : LogShipper.describe(error)
  FileHandle.standardError.write(Data("chronicle-sync-demo: \(message)\n".utf8))
  status = 1
}
await session.close()
if !keep { try? FileManager.default.removeItem(at: directory) }
exit(status)

#else
import Foundation

FileHandle.standardError.write(
  Data("chronicle-sync-demo needs the Postgres trait: swift run --traits Postgres chronicle-sync-demo\n".utf8))
exit(1)
#endif  // Postgres
