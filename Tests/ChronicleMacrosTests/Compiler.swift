import ChronicleTestTools
import Foundation
import Testing

/// The Swift compiler, run on small sources that use `@CBORCodable` as an app's would: they import
/// the `ChronicleMacros` module this build made, and the compiler expands the macro through the
/// plugin executable built next to the test bundle. What the tests see is what an app's build
/// prints: the compiler's own diagnostics at their positions, and the extensions it compiled.
struct Compiler {
  /// A diagnostic as the compiler prints it (`file:line:column: severity: message`); a diagnostic
  /// without a position has the file `<unknown>` and line and column 0.
  struct Diagnostic: Equatable, CustomStringConvertible {
    var file: String
    var line: Int
    var column: Int
    var severity: String
    var message: String

    var description: String { "\(file):\(line):\(column): \(severity): \(message)" }
  }

  /// How a compilation ended.
  struct Result {
    var status: Int32
    var diagnostics: [Diagnostic]
    /// The macro expansions, in the order the compiler dumped them, each as its text.
    var expansions: [String]
    /// Everything the compiler printed, for failure messages.
    var output: String

    var errors: [Diagnostic] { diagnostics.filter { $0.severity == "error" } }
  }

  /// The compiler on `PATH`: the one `swift test` runs with, which built the modules it imports.
  static let swiftc: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    .map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
    .first { FileManager.default.isExecutableFile(atPath: $0.path) }

  /// The build's products directory: the test bundle, the plugin and `Modules/`.
  static let products = Helpers.url("ChronicleMacrosPlugin-tool").deletingLastPathComponent()

  /// What is missing to run the compiler (nil: nothing).
  static var unavailable: String? {
    guard swiftc != nil else { return "no swiftc on PATH" }
    let plugin = products.appendingPathComponent("ChronicleMacrosPlugin-tool").path
    guard FileManager.default.isExecutableFile(atPath: plugin) else { return "no macro plugin at \(plugin)" }
    let module = products.appendingPathComponent("Modules/ChronicleMacros.swiftmodule").path
    guard FileManager.default.fileExists(atPath: module) else { return "no ChronicleMacros module at \(module)" }
    return nil
  }

  /// Compiles `files` (name and source) as one module, `Sample`: with `object`, to an object file
  /// (every check of the compiler, definite initialization included), else only type-checked.
  static func compile(_ files: [(name: String, source: String)], object: Bool) throws -> Result {
    let directory = try TemporaryDirectory(prefix: "chronicle-macros")
    defer { directory.remove() }
    var arguments = [
      object ? "-c" : "-typecheck", "-parse-as-library", "-module-name", "Sample", "-package-name", "Sample",
      "-I", products.appendingPathComponent("Modules").path,
      "-load-plugin-executable", products.appendingPathComponent("ChronicleMacrosPlugin-tool").path + "#ChronicleMacrosPlugin",
      "-diagnostic-style", "llvm", "-no-color-diagnostics", "-Xfrontend", "-dump-macro-expansions",
    ]
    // One frontend for all the files: it diagnoses each, where a frontend per file stops at the
    // first that fails.
    arguments.append("-wmo")
    if object { arguments += ["-o", directory.child("Sample.o").path] }
    for file in files {
      let url = directory.child(file.name)
      try file.source.write(to: url, atomically: true, encoding: .utf8)
      arguments.append(url.path)
    }
    guard let swiftc else { throw CompilerUnavailable() }
    let child = try ChildProcess.run(executable: swiftc, arguments, timeout: 300)
    // The sources' names without the temporary directory, as the tests spell them.
    let output = (child.stdout + child.stderr).replacingOccurrences(of: directory.path + "/", with: "")
    return Result(
      status: child.timedOut ? -1 : child.status, diagnostics: diagnostics(in: output),
      expansions: expansions(in: output), output: output)
  }

  struct CompilerUnavailable: Error {}

  /// The diagnostic lines of the compiler's output (not the source lines and carets under them).
  private static func diagnostics(in output: String) -> [Diagnostic] {
    let pattern = /^(?<file>[^\s:][^:]*):(?<line>\d+):(?:(?<column>\d+):)? (?<severity>error|warning|note|remark): (?<message>.*)$/
    return output.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
      guard let match = try? pattern.wholeMatch(in: line) else { return nil }
      return Diagnostic(
        file: String(match.file), line: Int(match.line) ?? 0, column: match.column.flatMap { Int($0) } ?? 0,
        severity: String(match.severity), message: String(match.message))
    }
  }

  /// The blocks `-dump-macro-expansions` prints: a line naming the expansion's buffer, a rule,
  /// the expansion, a rule.
  private static func expansions(in output: String) -> [String] {
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let rule = String(repeating: "-", count: 30)
    var expansions: [String] = []
    var index = 0
    while index + 1 < lines.count {
      guard lines[index].hasPrefix("@__swiftmacro_"), lines[index + 1] == rule,
        let end = lines[(index + 2)...].firstIndex(of: rule)
      else {
        index += 1
        continue
      }
      expansions.append(lines[(index + 2)..<end].joined(separator: "\n"))
      index = end + 1
    }
    return expansions
  }
}
