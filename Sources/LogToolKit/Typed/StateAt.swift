#if LogTool
import ArgumentParser
import Chronicle
import Foundation

extension LogTool {
  /// `state-at LOG SEQ`: the app's state after entry SEQ, as JSON.
  public struct StateAt<App: ReplayableApp>: ParsableCommand {
    /// `state-at`.
    public static var configuration: CommandConfiguration {
      CommandConfiguration(
        commandName: "state-at",
        abstract: "Print the state after an entry (0: the initial state), computed with the app's reducer.")
    }

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The entry's sequence number.
    @Argument(help: "The entry's sequence number (0 for the initial state).") public var seq: UInt64

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Prints the state.
    public func run() throws {
      do {
        let reader = try App.reader(log.url)
        defer { reader.close() }
        print(try App.json(try reader.state(at: seq)))
      } catch let error as ChronicleError {
        throw error.toolError
      }
    }
  }
}
#endif  // LogTool
