#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// What the file system says a file or directory is: its device and inode numbers.
///
/// Every spelling of a path (through symbolic links, with `..` components or a trailing slash,
/// `/tmp` and `/private/tmp` on macOS) names one identity, so per-process registries of open
/// environments and held locks key on it.
///
/// ```swift
/// let identity = FileIdentity(path: "/var/lib/app/log")   // nil when nothing is there
/// ```
public struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
  /// The device number (`st_dev`).
  public var device: UInt64
  /// The inode number (`st_ino`).
  public var inode: UInt64

  /// The identity of the file or directory at `path` (following symbolic links), or `nil`.
  public init?(path: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    device = UInt64(truncatingIfNeeded: info.st_dev)
    inode = UInt64(truncatingIfNeeded: info.st_ino)
  }

  /// `device:inode`.
  public var description: String { "\(device):\(inode)" }
}
