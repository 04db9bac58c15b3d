#if LogTool
import ArgumentParser
import Chronicle
import Foundation

extension LogTool {
  /// `replay LOG`: folds the whole log from the initial state with the app's
  /// reducer, using no snapshot, and checks every snapshot against the fold.
  ///
  /// A snapshot that differs from the replayed state means the reducer is not
  /// deterministic (it read the clock, a random number…) or the state type
  /// changed without a new state schema version: exit 1 naming the entry.
  public struct Replay<App: ReplayableApp>: ParsableCommand {
    /// `replay`.
    public static var configuration: CommandConfiguration {
      CommandConfiguration(
        commandName: "replay",
        abstract: "Replay the log from scratch with the app's reducer and check the snapshots against it.")
    }

    /// The log directory.
    @OptionGroup public var log: LogOptions
    /// `--json`.
    @OptionGroup public var output: OutputOptions
    /// Print the final state too.
    @Flag(help: "Print the final state.") public var printState = false

    /// Creates the command (argument parsing does this).
    public init() {}

    /// Replays and reports.
    public func run() throws {
      do {
        let reader = try App.reader(log.url)
        defer { reader.close() }
        var expected: [UInt64: String] = [:]
        for (seq, state) in try reader.snapshotStates() {
          if case .success(let state) = state { expected[seq] = try App.json(state) }
        }
        let start = ContinuousClock.now
        var count = 0
        var final: App.AppReducer.State?
        var mismatch: UInt64?
        var encodingError: (any Error)?
        try reader.replayFromScratch { seq, state in
          count += 1
          final = state
          if let snapshot = expected[seq] {
            do {
              if try App.json(state) != snapshot { mismatch = seq }
            } catch {
              encodingError = error
            }
          }
          return mismatch == nil && encodingError == nil
        }
        if let encodingError { throw LogToolError.logProblem("the state does not encode: \(encodingError)") }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if output.json {
          print(
            "{\"entries\":\(count),\"seconds\":\(seconds),\"snapshotsChecked\":\(expected.count),"
              + "\"firstMismatch\":\(mismatch.map(String.init) ?? "null")}")
        } else {
          print("replayed \(Format.grouped(count)) entries in \(Format.rate(count, seconds: seconds))")
          print("snapshots checked against the replay: \(expected.count)")
          if printState, let final { print(try App.json(final)) }
        }
        if let mismatch {
          throw LogToolError.logProblem(
            "the replayed state after entry \(mismatch) differs from its snapshot: "
              + "the reducer is not deterministic, or the state changed without a new state schema version")
        }
      } catch let error as ChronicleError {
        throw error.toolError
      }
    }
  }
}
#endif  // LogTool
