#if Inspector
import ArgumentParser
import Chronicle
import ChronicleLog
import Foundation
import Hummingbird
import LogToolKit

// MARK: - Options

/// `serve`'s options, shared by `logtool serve` and the typed tools' `serve`.
public struct ServeOptions: ParsableArguments {
  /// The log directory.
  @OptionGroup public var log: LogOptions
  /// The address to bind.
  @Option(help: "The address to listen on (loopback by default; any other needs --token).")
  public var host = "127.0.0.1"
  /// The port.
  @Option(help: "The port to listen on (0: any free port, printed at start).") public var port = 8420
  /// The token every request must carry.
  @Option(help: "A secret every request must carry (?token=… or Authorization: Bearer …); needed off loopback.")
  public var token: String?
  /// The log's verifier key, to check the signatures of its stored checkpoints.
  @Option(help: "The log's verifier key file: the verification panel then checks checkpoint signatures too.",
    completion: .file())
  public var key: String?

  /// Creates options (argument parsing does this).
  public init() {}

  /// Refuses a non-loopback address without a token, a bad port and an empty token.
  public func validate() throws {
    guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not a port (0…65535)") }
    if let token, token.count < 8 { throw ValidationError("--token must have at least 8 characters") }
    if !Self.isLoopback(host), token == nil {
      throw ValidationError(
        "--host \(host) is not a loopback address: give --token SECRET too, so that only those who know it can read the log")
    }
  }

  /// The characters a URL's query may hold as they are (RFC 3986's unreserved ones).
  static let unreserved = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

  /// `?token=…` for `token`, percent-encoded; empty without a token.
  static func tokenQuery(_ token: String?) -> String {
    token.map { "?token=" + ($0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? $0) } ?? ""
  }

  /// Whether `host` (a name or an address, without a port) names this machine only: `localhost`,
  /// an address in 127.0.0.0/8, or `::1` (bracketed or not).
  static func isLoopback(_ host: String) -> Bool {
    let host = host.lowercased()
    if host == "localhost" || host == "::1" || host == "[::1]" { return true }
    let parts = host.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
  }

  /// Opens the log, serves it until SIGINT or SIGTERM, and closes it.
  func serve(states makeStates: () throws -> InspectorStates?) async throws {
    // The log first: a path that is no log is named as `LogError` says (exit 2).
    try log.openReadOnly().close()
    let states: InspectorStates?
    do { states = try makeStates() } catch let error as ChronicleError {
      if case .log(let error) = error { throw error }
      throw LogToolError.badInput(error.description)
    }
    let verifier = try key.map { file -> NoteVerifier in
      let url = URL(fileURLWithPath: file)
      guard let text = try? String(contentsOf: url, encoding: .utf8) else {
        throw LogToolError.badInput("cannot read the verifier key file \(url.standardizedFileURL.path)")
      }
      do { return try NoteVerifier(parsing: text.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
        throw LogToolError.badInput("\(url.standardizedFileURL.path) is not a verifier key file: \(error)")
      }
    }
    // The tool verifies the chain in a child process of its own (`TOOL verify --json LOG`): a damaged
    // page that crashes the reader cannot take the server down.
    let inspector = try Inspector(
      directory: log.url, states: states, token: token, verifier: verifier,
      verifyCommand: Bundle.main.executablePath.map { [$0, "verify", "--json", log.path] }, keyRing: try log.keyRing())
    defer { inspector.close() }
    let host = host
    let path = log.path
    let app = inspector.application(host: host, port: port) { [inspector] port in
      FileHandle.standardOutput.write(Data("serving \(path) at \(inspector.pageURL(host: host, port: port))\n".utf8))
    }
    do {
      // Runs until SIGINT or SIGTERM, which end it gracefully.
      try await app.runService()
    } catch {
      throw LogToolError.badInput("cannot serve on \(host):\(port): \(error)")
    }
  }
}

// MARK: - Commands

extension LogTool {
  /// `logtool serve LOG`: the web inspector (entries, filters, timeline, live tail, verification).
  public struct Serve: AsyncParsableCommand {
    /// `serve`.
    public static let configuration = CommandConfiguration(
      abstract: "Serve a web inspector of the log: entries, filters, timeline, live tail and verification (read-only).",
      discussion: """
        Binds 127.0.0.1:8420 by default; another address needs --token. Stops on SIGINT or SIGTERM. \
        The JSON API under /api/ serves scripts too (docs/inspector.md). States need the app's own tool.
        """)

    /// The options.
    @OptionGroup public var options: ServeOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Serves until interrupted.
    public func run() async throws { try await options.serve { nil } }
  }

  /// `serve LOG` for an app's own tool: the web inspector, which also shows states and diffs.
  public struct AppServe<App: ReplayableApp>: AsyncParsableCommand {
    /// `serve`.
    public static var configuration: CommandConfiguration {
      CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a web inspector of the log with the app's states: entries, timeline, state and diff (read-only).",
        discussion: "Binds 127.0.0.1:8420 by default; another address needs --token. Stops on SIGINT or SIGTERM.")
    }

    /// The options.
    @OptionGroup public var options: ServeOptions

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Serves until interrupted.
    public func run() async throws {
      try await options.serve { try InspectorStates.replaying(App.self, directory: options.log.url) }
    }
  }
}
#endif  // Inspector
