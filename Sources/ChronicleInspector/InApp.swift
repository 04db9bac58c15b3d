#if Inspector
import Chronicle
import ChronicleLog
import Foundation
import Hummingbird
import LogToolKit

// MARK: - Controls

/// What the in-app inspector's page may do to its store besides reading: each button is opt-in,
/// and none is on by default.
public struct InspectorControls: OptionSet, Sendable, Hashable {
  /// The bits.
  public let rawValue: Int

  /// Controls from their bits.
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// An *Undo* button: ``/Chronicle/Store/undo(metadata:)``.
  public static let undo = InspectorControls(rawValue: 1)
  /// A *Redo* button: ``/Chronicle/Store/redo(metadata:)``.
  public static let redo = InspectorControls(rawValue: 2)
  /// A *Restore to here* button on each entry: ``/Chronicle/Store/restore(to:metadata:)``.
  public static let restore = InspectorControls(rawValue: 4)
  /// Undo, redo and restore.
  public static let all: InspectorControls = [.undo, .redo, .restore]

  /// The names the API and the page use.
  var names: [String] {
    [(InspectorControls.undo, "undo"), (.redo, "redo"), (.restore, "restore")].filter { contains($0.0) }.map(\.1)
  }
}

/// The store operations the enabled buttons call, typed by the store's state and action.
struct StoreControls: Sendable {
  var enabled: InspectorControls
  var undo: @Sendable ([String: String]) throws -> UInt64
  var redo: @Sendable ([String: String]) throws -> UInt64
  var restore: @Sendable (UInt64, [String: String]) throws -> UInt64
  var canUndo: @Sendable () -> Bool
  var canRedo: @Sendable () -> Bool
}

// MARK: - The inspector of a live store

extension Inspector {
  /// The metadata of the entries the in-app inspector's buttons make: `who` names the inspector.
  public static let entryMetadata = ["who": "inspector", "why": "a button of the in-app inspector"]

  /// The inspector of a live store, in the app's own process: the store's log read-only (shared
  /// with the store, so every entry it appends shows at once) and its states from
  /// ``/Chronicle/Store/state(at:)``.
  ///
  /// The page may undo, redo and restore only with `controls`. Those buttons call the store like
  /// any other caller: each makes an audited entry with ``entryMetadata``, the store's validators
  /// may refuse it, and nothing is written to the log behind the store's back. Each is a `POST`
  /// that must carry the token (`Authorization: Bearer …`) from the server's own origin: with
  /// controls and no `token`, the inspector makes a random one (``token``).
  ///
  /// - Parameters:
  ///   - store: the app's store; it stays the log's only writer.
  ///   - controls: the buttons to offer; none by default (read-only).
  ///   - token: a secret every request must carry (at least 8 characters), or `nil`.
  /// - Throws: ``/Chronicle/ChronicleError/unsupported(_:)`` for a token shorter than 8 characters;
  ///   ``/ChronicleLog/LogError`` when the store's log cannot be opened for reading.
  public convenience init<State, Action>(
    store: Store<State, Action>, controls: InspectorControls = [], token: String? = nil
  ) throws {
    if let token, token.count < 8 {
      throw ChronicleError.unsupported("the inspector's token must have at least 8 characters")
    }
    let states = InspectorStates(
      state: { seq in
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(try store.state(at: seq)))
      },
      close: {})
    let metadata = Self.entryMetadata
    let operations =
      controls.isEmpty
      ? nil
      : StoreControls(
        enabled: controls,
        undo: { try store.undo(metadata: metadata.merging($0) { $1 }) },
        redo: { try store.redo(metadata: metadata.merging($0) { $1 }) },
        restore: { try store.restore(to: $0, metadata: metadata.merging($1) { $1 }) },
        canUndo: { store.canUndo }, canRedo: { store.canRedo })
    try self.init(
      directory: URL(fileURLWithPath: store.logPath, isDirectory: true), states: states,
      token: token ?? (controls.isEmpty ? nil : Self.randomToken()), verifier: nil, verifyCommand: nil,
      keyRing: store.options.keyRing, controls: operations)
  }

  /// Serves the inspector of `store` on `host`:`port` until the calling task is cancelled; the
  /// page's address (with its token) is handed to `onRunning`.
  ///
  /// ```swift
  /// let server = Task {
  ///   try await Inspector.serve(store, port: 8420, controls: [.undo, .redo]) { url in
  ///     print("inspector at \(url)")
  ///   }
  /// }
  /// // … later, when the app stops inspecting:
  /// server.cancel()
  /// ```
  ///
  /// - Throws: ``/Chronicle/ChronicleError/unsupported(_:)`` for a host other than loopback without a token;
  ///   the server's error when it cannot bind.
  public static func serve<State, Action>(
    _ store: Store<State, Action>, host: String = "127.0.0.1", port: Int = 8420, controls: InspectorControls = [],
    token: String? = nil, onRunning: @escaping @Sendable (_ url: String) async -> Void = { _ in }
  ) async throws {
    guard ServeOptions.isLoopback(host) || token != nil else {
      throw ChronicleError.unsupported(
        "\(host) is not a loopback address: give a token too, so that only those who know it can use the inspector")
    }
    let inspector = try Inspector(store: store, controls: controls, token: token)
    defer { inspector.close() }
    let app = inspector.application(host: host, port: port) { port in
      await onRunning(inspector.pageURL(host: host, port: port))
    }
    try await app.runService()
  }

  /// The page's address on `host`:`port`, with the token when there is one.
  public func pageURL(host: String, port: Int) -> String {
    let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    return "http://\(shown):\(port)/\(ServeOptions.tokenQuery(token))"
  }

  /// 32 random hexadecimal digits.
  static func randomToken() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
  }
}

// MARK: - The buttons' endpoints

extension Inspector {
  /// The paths of the enabled buttons' endpoints (`POST`); the restore path ends in the target seq.
  func writable(_ path: String) -> Bool {
    guard let controls else { return false }
    if path == "/api/undo" { return controls.enabled.contains(.undo) }
    if path == "/api/redo" { return controls.enabled.contains(.redo) }
    if path.hasPrefix("/api/restore/") { return controls.enabled.contains(.restore) }
    return false
  }

  /// Adds the enabled buttons' routes.
  func addControlRoutes(to router: Router<BasicRequestContext>) {
    guard let controls else { return }
    if controls.enabled.contains(.undo) {
      router.post("/api/undo") { request, _ in try await self.act(request) { try controls.undo([:]) } }
    }
    if controls.enabled.contains(.redo) {
      router.post("/api/redo") { request, _ in try await self.act(request) { try controls.redo([:]) } }
    }
    if controls.enabled.contains(.restore) {
      router.post("/api/restore/{seq}") { request, context in
        let seq = try Self.seq(context.parameters.get("seq"))
        return try await self.act(request) { try controls.restore(seq, [:]) }
      }
    }
  }

  /// Runs a button's store call off the event loop: `{"seq": N}` of the entry it made, or 409 with
  /// the store's refusal (nothing to undo, a validator's reason), 404 for an unknown target.
  func act(_ request: Request, _ body: @escaping @Sendable () throws -> UInt64) async throws -> Response {
    do {
      let seq = try await offload(body)
      var out = JSONWriter()
      out.beginObject()
      out.field("seq", seq)
      out.endObject()
      return Self.json(out.text, status: .ok)
    } catch let error as ChronicleError {
      let status: Int
      switch error {
      case .noSuchEntry, .compacted: status = 404
      case .nothingToUndo, .nothingToRedo, .rejected: status = 409
      default: status = 500
      }
      return Self.json(APIError(status: status, message: error.description).json, status: .init(code: status))
    } catch let error as APIError {
      return Self.json(error.json, status: .init(code: error.status))
    } catch {
      return Self.json(APIError(status: 500, message: "\(error)").json, status: .internalServerError)
    }
  }

  /// The info fields of the in-app inspector: its buttons and whether each can act now.
  func writeControls(into out: inout JSONWriter) {
    out.key("controls")
    out.beginArray()
    for name in controls?.enabled.names ?? [] { out.string(name) }
    out.endArray()
    if let controls {
      out.field("canUndo", controls.canUndo())
      out.field("canRedo", controls.canRedo())
    }
  }
}
#endif  // Inspector
