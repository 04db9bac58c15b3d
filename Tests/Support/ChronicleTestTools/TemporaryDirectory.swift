import Foundation

// MARK: - Temporary directories

/// A fresh, empty directory under the system's temporary directory, for one test.
///
/// Tests create it at their start and call ``remove()`` in a `defer`.
public struct TemporaryDirectory: Sendable {
  /// The directory.
  public let url: URL

  /// The directory's path.
  public var path: String { url.path }

  /// Creates a new directory named after `prefix` and a random UUID.
  public init(prefix: String = "chronicle-tests") throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// A path inside the directory (it need not exist yet).
  public func child(_ name: String) -> URL { url.appendingPathComponent(name) }

  /// Removes the directory and everything in it.
  public func remove() {
    // Restore permissions a test may have removed, so cleanup always works.
    _ = try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
    try? FileManager.default.removeItem(at: url)
  }
}
