import Foundation

// MARK: - The repository's files

/// The repository the tests run in: its root, and the committed files tests read.
public enum Repository {
  /// The repository's root, found from this file's path (`Tests/Support/ChronicleTestTools/`).
  public static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  /// The file or directory at `relativePath` below the root.
  public static func file(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }
}

/// The committed fixture logs in the repository's `fixtures/` directory.
public enum Fixtures {
  /// The committed directory of fixture `name` (never opened in place).
  public static func directory(_ name: String) -> URL {
    Repository.root.appendingPathComponent("fixtures").appendingPathComponent(name)
  }

  /// Copies fixture `name` into `temporary` and returns the copy.
  public static func copy(_ name: String, into temporary: TemporaryDirectory) throws -> URL {
    let copy = temporary.child(name)
    try FileManager.default.copyItem(at: directory(name), to: copy)
    return copy
  }
}
