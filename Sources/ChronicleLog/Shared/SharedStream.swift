import Crypto
import Foundation

/// The name of a shared stream: one history that many devices append to, in the order a server
/// assigns, and that every device holds byte for byte once it has caught up.
///
/// The name decides everything else: the 16-byte ``id`` that names the stream's log on the server
/// and on every device (and that an encrypted stream's seals are bound to), and the checkpoint
/// ``origin``. A device can therefore create its copy of the stream before it ever reached the
/// server, offline.
///
/// ```swift
/// let stream = SharedStream("expenses")
/// stream.origin   // "chronicle/expenses/4f1c…"
/// ```
public struct SharedStream: Sendable, Hashable, CustomStringConvertible {
  /// The stream's name (also the app identifier its logs record).
  public let name: String

  /// Names a stream. The name is not checked here; an empty one is refused where a stream is opened.
  public init(_ name: String) { self.name = name }

  /// The stream's log identifier: the first 16 bytes of SHA-256("chronicle shared stream\n" ‖ name).
  public var id: [UInt8] { Array(SHA256.hash(data: Data(("chronicle shared stream\n" + name).utf8)).prefix(16)) }

  /// The origin line of the stream's checkpoints, the same on every device and on the server.
  public var origin: String { ActionLog.origin(appID: name, logID: id) }

  /// The stream's name.
  public var description: String { name }
}
