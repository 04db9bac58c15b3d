#if LogTool
import ArgumentParser
import Chronicle
import Foundation

/// What an app tells its own log tool so that it can replay the log: the
/// reducer, the initial state, and the store options that matter to replay.
///
/// ```swift
/// enum LedgerApp: ReplayableApp {
///   static var reducer: Ledger { Ledger() }
///   static var initialState: Ledger.State { Ledger.State() }
/// }
///
/// @main
/// struct LedgerTool: AsyncParsableCommand {
///   static let configuration = CommandConfiguration(
///     commandName: "ledger-tool",
///     subcommands: LogTool.standardSubcommands + LogTool.appSubcommands(LedgerApp.self))
///   static func main() async { await LogTool.main(LedgerTool.self) }
/// }
/// ```
public protocol ReplayableApp {
  /// The app's reducer type.
  associatedtype AppReducer: Reducer
  /// The app's reducer.
  static var reducer: AppReducer { get }
  /// The state before the first entry.
  static var initialState: AppReducer.State { get }
  /// The options the app opens its store with (schema versions, migrations, undo depth).
  static var storeOptions: StoreOptions { get }
}

extension ReplayableApp {
  /// The default options.
  public static var storeOptions: StoreOptions { StoreOptions() }

  /// Opens the log in `directory` read-only for time travel with this app's reducer.
  static func reader(_ directory: URL) throws -> HistoryReader<AppReducer.State, AppReducer.Action> {
    try HistoryReader(directory: directory, initialState: initialState, reducer: reducer, options: storeOptions)
  }

  /// `value` as pretty JSON with sorted keys (the app's own `Encodable` form).
  static func json(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }
}

extension LogTool {
  /// The commands that need the app's reducer: `state-at`, `replay`, `diff`.
  public static func appSubcommands<App: ReplayableApp>(_ app: App.Type) -> [ParsableCommand.Type] {
    [StateAt<App>.self, Replay<App>.self, Diff<App>.self]
  }
}

extension ChronicleError {
  /// Maps the engine's errors onto the tool's exit codes.
  var toolError: LogToolError {
    switch self {
    case .noSuchEntry, .logLocked, .unsupported: .badInput(description)
    case .log(let error): LogToolError(exitCode: LogTool.exitStatus(for: error).code, message: error.description)
    default: .logProblem(description)
    }
  }
}
#endif  // LogTool
