#if LogTool
import ArgumentParser
import Chronicle
import CustomDump
import Foundation

extension LogTool {
  /// `diff LOG SEQ1 SEQ2`: a structural diff of the states after two entries.
  public struct Diff<App: ReplayableApp>: ParsableCommand {
    /// `diff`.
    public static var configuration: CommandConfiguration {
      CommandConfiguration(commandName: "diff", abstract: "Show what changed in the state between two entries.")
    }

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// The earlier entry.
    @Argument(help: "The first entry's sequence number (0: the initial state).") public var from: UInt64
    /// The later entry.
    @Argument(help: "The second entry's sequence number.") public var to: UInt64

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Prints the diff, or that the states are equal.
    public func run() throws {
      do {
        let reader = try App.reader(log.url)
        defer { reader.close() }
        let before = try reader.state(at: from)
        let after = try reader.state(at: to)
        if let difference = CustomDump.diff(before, after, format: .proportional) {
          print("state after \(from) → state after \(to):")
          print(difference)
        } else {
          print("the states after \(from) and \(to) are equal")
        }
      } catch let error as ChronicleError {
        throw error.toolError
      }
    }
  }
}
#endif  // LogTool
