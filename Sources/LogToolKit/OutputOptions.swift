#if LogTool
import ArgumentParser
import ChronicleLog
import Foundation

/// `--json`: one JSON document on standard output instead of a table.
public struct OutputOptions: ParsableArguments {
  /// Whether to print JSON.
  @Flag(help: "Print one JSON document instead of a table.")
  public var json = false

  /// Creates options (argument parsing does this).
  public init() {}
}
#endif  // LogTool
