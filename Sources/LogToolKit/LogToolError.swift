#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

/// An error a command reports with an exit code and one line of text.
public struct LogToolError: Error, CustomStringConvertible {
  /// The process's exit code.
  public var exitCode: Int32
  /// What went wrong and where (the path, the sequence number).
  public var message: String

  /// Creates an error.
  public init(exitCode: Int32, message: String) {
    self.exitCode = exitCode
    self.message = message
  }

  /// Bad usage or bad input: exit code 2.
  public static func badInput(_ message: String) -> LogToolError {
    LogToolError(exitCode: LogTool.exitBadInput, message: message)
  }

  /// The log has problems: exit code 1.
  public static func logProblem(_ message: String) -> LogToolError {
    LogToolError(exitCode: LogTool.exitLogProblem, message: message)
  }

  /// ``message``.
  public var description: String { message }
}
#endif  // LogTool
