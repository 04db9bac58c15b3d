import Foundation

/// Why a shared store stopped syncing with its server: the server's history is no longer one that
/// continues the device's copy. The device keeps its copy and its outbox, and every round throws
/// the same error until an administrator repairs the server (`docs/sync.md`, *Limits*).
public enum SyncError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
  /// The server holds fewer entries than the device's copy (`serverHead`, if known, against
  /// `deviceHead`): it was restored from an older backup.
  case serverBehind(path: String, serverHead: UInt64?, deviceHead: UInt64)
  /// The server's entries do not continue the device's copy at entry `seq`: its history was changed
  /// behind its checks.
  case forked(path: String, seq: UInt64)

  /// One sentence: what is wrong, and what to do.
  public var description: String {
    switch self {
    case .serverBehind(let path, let server?, let device):
      "the server holds \(server) entries of the stream but the copy at \(path) holds \(device): it was "
        + "restored from an older backup; put the missing entries back from this copy (`PostgresStreamServer.restore` "
        + "as the schema's owner) before syncing again"
    case .serverBehind(let path, nil, let device):
      "the server no longer holds entry \(device), which the copy at \(path) holds: it was restored from an "
        + "older backup; put the missing entries back from this copy (`PostgresStreamServer.restore` as the "
        + "schema's owner) before syncing again"
    case .forked(let path, let seq):
      "the server's entries no longer continue the copy at \(path) at entry \(seq): the stream was changed "
        + "on the server behind its checks; this device keeps its copy and stops syncing (`logtool "
        + "server-verify` shows what changed)"
    }
  }

  /// The same sentence, for `localizedDescription`.
  public var errorDescription: String? { description }
}
