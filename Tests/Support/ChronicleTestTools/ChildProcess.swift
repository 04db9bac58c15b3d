import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// MARK: - Helper executables

/// The executables built next to the test bundle: the helpers under `Tests/Helpers` and the tools.
public enum Helpers {
  /// The built executable `name` (for example `chronicle-log-probe` or `logtool`).
  public static func url(_ name: String) -> URL {
    Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent(name)
  }
}

// MARK: - Output lines

/// The lines a child process writes to one of its pipes, each with the time it arrived,
/// collected on a thread of their own: the parent reads or waits for them without blocking
/// the child, and can kill the child at a moment that does not depend on when it printed.
public final class OutputLines: Sendable {
  private struct State {
    var lines: [(text: String, time: Date)] = []
    var partial: [UInt8] = []
    var bytes: [UInt8] = []
    var ended = false
  }
  private let state = Mutex(State())

  /// Starts collecting from `handle` until its end.
  init(_ handle: FileHandle) {
    let thread = Thread { [self] in
      while true {
        let data = handle.availableData
        let now = Date()
        state.withLock { state in
          guard !data.isEmpty else {
            if !state.partial.isEmpty {
              state.lines.append((String(decoding: state.partial, as: UTF8.self), now))
              state.partial.removeAll()
            }
            state.ended = true
            return
          }
          state.bytes.append(contentsOf: data)
          state.partial.append(contentsOf: data)
          while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
            state.lines.append((String(decoding: state.partial[..<newline], as: UTF8.self), now))
            state.partial.removeSubrange(...newline)
          }
        }
        if data.isEmpty { return }
      }
    }
    thread.start()
  }

  /// The complete lines so far (and, once the output ended, an unterminated last line), with their arrival times.
  public var lines: [(text: String, time: Date)] { state.withLock { $0.lines } }

  /// The lines' text so far.
  public var texts: [String] { state.withLock { $0.lines.map(\.text) } }

  /// Everything written so far, as text.
  public var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

  /// Line `index` (from 0), if it has arrived.
  func line(_ index: Int) -> String? {
    state.withLock { index < $0.lines.count ? $0.lines[index].text : nil }
  }

  /// Whether the writing end is closed (the child and every process sharing the pipe are gone).
  public var hasEnded: Bool { state.withLock { $0.ended } }

  /// Waits until `condition` holds for the lines (or `timeout` seconds pass); returns whether it holds.
  public func waitFor(timeout: TimeInterval, _ condition: ([(text: String, time: Date)]) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if condition(lines) { return true }
      usleep(1_000)
    }
    return condition(lines)
  }

  /// Waits (at most `timeout` seconds) for the end of the output; returns whether it came.
  @discardableResult
  public func waitForEnd(timeout: TimeInterval = 60) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !hasEnded, Date() < deadline { usleep(1_000) }
    return hasEnded
  }
}

// MARK: - Child processes

/// Sends SIGKILL to `pid` (a free function: inside ``ChildProcess`` the name `kill` is its method).
private func killHard(_ pid: Int32) { _ = kill(pid, SIGKILL) }

/// How a finished child process ended and what it printed.
public struct ChildResult: Sendable {
  /// Its exit status, or the signal that ended it.
  public var status: Int32
  /// Whether it exited or was ended by a signal.
  public var reason: Process.TerminationReason
  /// Its standard output.
  public var stdout: String
  /// Its standard error (empty unless captured).
  public var stderr: String
  /// Whether it outlived its time limit and was killed.
  public var timedOut: Bool

  /// A result; for output captured without a child process, an exit with `status`.
  public init(
    status: Int32, reason: Process.TerminationReason = .exit, stdout: String, stderr: String, timedOut: Bool = false
  ) {
    self.status = status
    self.reason = reason
    self.stdout = stdout
    self.stderr = stderr
    self.timedOut = timedOut
  }

  /// Standard error's non-empty lines.
  public var errorLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// A running child process: spawned at once, its standard output collected line by line,
/// its standard input a pipe the test writes to (or empty), ended by ``wait(timeout:)``
/// (which kills it with SIGKILL after the time limit) or by ``kill()``.
public final class ChildProcess {
  /// Where the child's standard error goes.
  public enum ErrorOutput: Sendable {
    /// To the test's own standard error, so a failing child explains itself in the test log.
    case inherit
    /// Collected in ``errors``.
    case capture
    /// Nowhere.
    case discard
  }

  /// The process.
  public let process = Process()
  /// Its standard output.
  public let output: OutputLines
  /// Its standard error, when captured.
  public let errors: OutputLines?
  private let input: Pipe?
  private let outputPipe = Pipe()
  /// Whether ``wait(timeout:)`` had to kill it.
  public private(set) var timedOut = false
  private var consumed = 0

  /// Starts `executable` with `arguments`. With `input`, its standard input is a pipe
  /// (see ``write(_:)`` and ``closeInput()``); without, it is empty.
  public init(
    executable: URL, _ arguments: [String], input: Bool = false, errors: ErrorOutput = .inherit,
    environment: [String: String]? = nil
  ) throws {
    process.executableURL = executable
    process.arguments = arguments
    if let environment {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    }
    process.standardOutput = outputPipe
    self.input = input ? Pipe() : nil
    process.standardInput = self.input ?? FileHandle.nullDevice
    let errorPipe = errors == .capture ? Pipe() : nil
    switch errors {
    case .inherit: process.standardError = FileHandle.standardError
    case .capture: process.standardError = errorPipe
    case .discard: process.standardError = FileHandle.nullDevice
    }
    output = OutputLines(outputPipe.fileHandleForReading)
    self.errors = errorPipe.map { OutputLines($0.fileHandleForReading) }
    try process.run()
  }

  /// Starts the helper executable `name` (see ``Helpers``) with `arguments`.
  public convenience init(
    _ name: String, _ arguments: [String], input: Bool = false, errors: ErrorOutput = .inherit,
    environment: [String: String]? = nil
  ) throws {
    try self.init(
      executable: Helpers.url(name), arguments, input: input, errors: errors, environment: environment)
  }

  /// Runs `executable` with `arguments` to its end (killing it after `timeout` seconds) and
  /// returns how it ended, with its standard output and standard error.
  public static func run(
    executable: URL, _ arguments: [String], timeout: TimeInterval = 120, environment: [String: String]? = nil
  ) throws -> ChildResult {
    let child = try ChildProcess(
      executable: executable, arguments, errors: .capture, environment: environment)
    return child.finish(timeout: timeout)
  }

  /// Runs the helper executable `name` (see ``Helpers``) to its end; see ``run(executable:_:timeout:environment:)``.
  public static func run(
    _ name: String, _ arguments: [String], timeout: TimeInterval = 120, environment: [String: String]? = nil
  ) throws -> ChildResult {
    try run(executable: Helpers.url(name), arguments, timeout: timeout, environment: environment)
  }

  /// The child's process identifier.
  public var pid: Int32 { process.processIdentifier }

  /// Whether the child is still running.
  public var isRunning: Bool { process.isRunning }

  /// The next line of standard output not read yet; `nil` at the end of the output, or when
  /// none came within `timeout` seconds.
  public func readLine(timeout: TimeInterval = 120) -> String? {
    readLine(before: Date().addingTimeInterval(timeout))
  }

  /// The next line of standard output not read yet; `nil` at the end of the output, or when none came before `deadline`.
  public func readLine(before deadline: Date) -> String? {
    while true {
      let ended = output.hasEnded
      if let line = output.line(consumed) {
        consumed += 1
        return line
      }
      if ended || Date() >= deadline { return nil }
      usleep(500)
    }
  }

  /// Waits until `condition` holds for the lines of standard output (or `timeout` seconds pass); returns whether it holds.
  public func waitFor(timeout: TimeInterval, _ condition: ([(text: String, time: Date)]) -> Bool) -> Bool {
    output.waitFor(timeout: timeout, condition)
  }

  /// Writes `line` and a newline to the child's standard input.
  public func write(_ line: String) {
    input?.fileHandleForWriting.write(Data((line + "\n").utf8))
  }

  /// Closes the child's standard input.
  public func closeInput() { try? input?.fileHandleForWriting.close() }

  /// Closes the child's standard input and waits up to `timeout` seconds for it to end, then
  /// kills it with SIGKILL; returns its exit status (or signal).
  @discardableResult
  public func wait(timeout: TimeInterval = 120) -> Int32 {
    closeInput()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning, Date() < deadline { usleep(1_000) }
    if process.isRunning {
      timedOut = true
      killHard(process.processIdentifier)
    }
    process.waitUntilExit()
    output.waitForEnd()
    errors?.waitForEnd()
    return process.terminationStatus
  }

  /// Kills the child with SIGKILL and waits for it and the end of its output.
  public func kill() {
    killHard(process.processIdentifier)
    process.waitUntilExit()
    output.waitForEnd()
    errors?.waitForEnd()
  }

  /// Waits as ``wait(timeout:)`` does and returns the whole run.
  public func finish(timeout: TimeInterval = 120) -> ChildResult {
    let status = wait(timeout: timeout)
    return ChildResult(
      status: status, reason: process.terminationReason, stdout: output.text, stderr: errors?.text ?? "",
      timedOut: timedOut)
  }
}
