import Foundation

// MARK: - The helper executables' main

/// Prints a line at once (unbuffered), so the parent sees each acknowledgement before a kill.
public func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Runs a helper executable's command: `tool COMMAND DIR ARGUMENTS…`.
///
/// `commands` gets the command, the directory and the other arguments, and returns `false`
/// for a command it does not know. A usage error exits with 2, an unknown command with 2,
/// an error thrown by `commands` with 1, after one line on standard error.
public func runHelper(_ tool: String, _ commands: (_ command: String, _ directory: URL, _ rest: [String]) throws -> Bool)
  -> Never
{
  let arguments = CommandLine.arguments.dropFirst()
  guard let command = arguments.first, arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: \(tool) COMMAND DIR …\n".utf8))
    exit(2)
  }
  let directory = URL(fileURLWithPath: arguments[arguments.startIndex + 1])
  do {
    guard try commands(command, directory, Array(arguments.dropFirst(2))) else {
      FileHandle.standardError.write(Data("unknown command \(command)\n".utf8))
      exit(2)
    }
    exit(0)
  } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
  }
}

/// Becomes the user and group 65534 ("nobody"), so file permissions apply even to root;
/// prints "cannot drop privileges" and exits with 4 if the system refuses.
public func becomeNobody() {
  guard setgid(65534) == 0, setuid(65534) == 0 else {
    say("cannot drop privileges")
    exit(4)
  }
}

/// Runs `attempt` (an open that prints "opened" and closes again); on an error, prints the
/// error and exits with 3.
public func reportingOpen(_ attempt: () throws -> Void) {
  do {
    try attempt()
  } catch {
    say("\(error)")
    exit(3)
  }
}
