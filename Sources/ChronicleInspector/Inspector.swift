#if Inspector
import ChronicleCBOR
import Chronicle
import ChronicleLog
import Foundation
import LogToolKit
import NIOPosix
import Synchronization

// MARK: - States

/// How the inspector computes an app's state at a sequence number: given by typed tools
/// (built with LogToolKit and a ``/LogToolKit/ReplayableApp``); without it the inspector shows
/// entries, snapshots and verification but no states.
public struct InspectorStates: Sendable {
  /// The state after entry `seq` (0: the initial state) as JSON.
  let state: @Sendable (UInt64) throws -> [UInt8]
  /// Releases the reader.
  let close: @Sendable () -> Void

  /// States computed by `state`, released by `close`.
  public init(state: @escaping @Sendable (UInt64) throws -> [UInt8], close: @escaping @Sendable () -> Void) {
    self.state = state
    self.close = close
  }

  /// States replayed with `app`'s reducer from the log in `directory` (read-only; snapshots
  /// shorten the replay).
  public static func replaying<App: ReplayableApp>(_ app: App.Type, directory: URL) throws -> InspectorStates {
    let reader = try HistoryReader(
      directory: directory, initialState: App.initialState, reducer: App.reducer, options: App.storeOptions)
    return InspectorStates(
      state: { seq in
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(try reader.state(at: seq)))
      },
      close: { reader.close() })
  }
}

// MARK: - Inspector

/// The web inspector of one log: the JSON API and the page `logtool serve` serves, read-only.
///
/// ```swift
/// let inspector = try Inspector(directory: URL(fileURLWithPath: "ledger.log"))
/// defer { inspector.close() }
/// let app = inspector.application(host: "127.0.0.1", port: 8420)
/// try await app.runService()
/// ```
public final class Inspector: Sendable {
  /// The log, opened read-only: the inspector works while an app writes it.
  let log: ActionLog
  /// The log directory's absolute path.
  let path: String
  /// The app's states, for typed tools.
  let states: InspectorStates?
  /// The token every request must carry, when set: the in-app inspector with controls makes one
  /// when none is given. The page's URL carries it (`/?token=…`).
  public let token: String?
  /// The store's undo, redo and restore the in-app inspector's buttons call, when enabled.
  let controls: StoreControls?
  /// Verifies the signatures of stored checkpoints, when given.
  let verifier: NoteVerifier?
  /// The command that verifies the log in a child process (`TOOL verify --json DIR`), so a damaged
  /// page cannot crash the server; `nil` verifies in this process.
  let verifyCommand: [String]?
  /// Caches that follow the log as it grows.
  let caches = Mutex(Caches())
  /// The outbox of a shared stream's device copy and the device's rejections counted so far.
  let sharedStream = Mutex(SharedStreamState())
  /// The threads the blocking work of requests runs on (``offload(_:)``): the inspector's own,
  /// started when it opens and stopped by ``close()``.
  ///
  /// Four: the page asks for the statistics and the verification as it opens, which take seconds
  /// on a long log (each holds a thread meanwhile, the verification waiting for its child
  /// process), and two more keep answering the list's pages and the live tail. No more: the rest
  /// of the work is short reads of a memory-mapped log for one person's page, and the in-app
  /// inspector shares the machine with the app it inspects.
  let workers = NIOThreadPool(numberOfThreads: 4)

  /// What the inspector remembers between requests.
  struct Caches {
    var stats = TypeStats()
    var snapshotSeqs: (last: UInt64?, seqs: Set<UInt64>)?
    var verification: VerifiedChain?
  }

  /// The last chain report, and what it verified.
  struct VerifiedChain {
    /// The verified prefix to extend on growth; `nil` when the report found problems.
    var prefix: VerifiedPrefix?
    /// The chain report's JSON.
    var chain: String
    /// The last entry when an invalid report was made: it is made again once the log grows.
    var last: UInt64?
  }

  /// Opens the log in `directory` read-only.
  ///
  /// - Parameters:
  ///   - directory: the log's directory.
  ///   - states: how to compute states (typed tools); `nil` shows no states.
  ///   - token: when set, every request must carry it (`Authorization: Bearer TOKEN` or `?token=TOKEN`).
  ///   - verifier: the log's verifier key, to check the signatures of its stored checkpoints.
  ///   - verifyCommand: the command whose `--json` report the verification panel shows; `nil`
  ///     verifies in this process.
  ///   - keyRing: the keys of an encrypted log, to show its entries in the clear; without them
  ///     its entries show as *encrypted* (the chain still verifies).
  /// - Throws: ``/ChronicleLog/LogError`` naming the path when it is no log.
  public convenience init(
    directory: URL, states: InspectorStates? = nil, token: String? = nil, verifier: NoteVerifier? = nil,
    verifyCommand: [String]? = nil, keyRing: KeyRing? = nil
  ) throws {
    try self.init(
      directory: directory, states: states, token: token, verifier: verifier, verifyCommand: verifyCommand,
      keyRing: keyRing, controls: nil)
  }

  /// Opens the log in `directory` read-only, with the in-app controls when given.
  init(
    directory: URL, states: InspectorStates?, token: String?, verifier: NoteVerifier?, verifyCommand: [String]?,
    keyRing: KeyRing?, controls: StoreControls?
  ) throws {
    self.log = try ActionLog(
      directory: directory, access: .readOnly, options: .init(keyRing: keyRing, returnsSealedEntries: true))
    self.path = directory.standardizedFileURL.path
    self.states = states
    self.token = token
    self.verifier = verifier
    self.verifyCommand = verifyCommand
    self.controls = controls
    workers.start()
  }

  /// Stops the inspector's threads, then closes the log and the state reader: call it once its
  /// servers have stopped.
  ///
  /// It waits for the requests' work in progress to end, so that none reads the log after it
  /// closes; a request that comes later is answered with status 503.
  public func close() {
    try? workers.syncShutdownGracefully()
    states?.close()
    closeSharedStream()
    try? log.close()
  }
}

// MARK: - Errors

/// A request the API refuses: its status and one-line message, sent as `{"error": message}`.
struct APIError: Error {
  var status: Int
  var message: String

  static func badRequest(_ message: String) -> APIError { APIError(status: 400, message: message) }
  static func notFound(_ message: String) -> APIError { APIError(status: 404, message: message) }

  var json: String {
    var out = JSONWriter()
    out.beginObject()
    out.field("error", message)
    out.endObject()
    return out.text
  }
}

// MARK: - Blocking work

extension Inspector {
  /// Runs `body` on the inspector's threads (``workers``), off the server's event loops and
  /// Swift's cooperative threads, which must not block on LMDB, a replay or a child process.
  ///
  /// A `body` that has started runs to its end; one still waiting for a thread when the calling
  /// task is cancelled does not run, and `CancellationError` is thrown.
  /// - Throws: what `body` throws; ``APIError`` (503) once ``close()`` has stopped the threads.
  func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    do {
      return try await workers.runIfActive(body)
    } catch is CancellationError where !Task.isCancelled {
      // The pool refuses work once stopped, with the error a cancelled task gets.
      throw APIError(status: 503, message: "the inspector is closed: open a new one to serve this log")
    }
  }
}
#endif  // Inspector
