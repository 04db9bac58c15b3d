import Foundation
import ChronicleLMDB

// MARK: - A fixed log identifier

/// Fixtures and the worked example of `docs/log-format.md` name their log with a fixed identifier,
/// so that their checkpoint origins (and so their signed notes) are the same on every run. A log
/// gets a random one when it is created; this replaces it in meta `log-id`.
public enum LogIdentity {
  /// Writes `id` (16 bytes) into meta `log-id` of the closed log at `directory`, before any
  /// checkpoint is signed (a checkpoint names the identifier its log had).
  public static func replace(with id: [UInt8], in directory: URL) throws {
    precondition(id.count == 16, "a log identifier has 16 bytes")
    let environment = try Environment(
      path: directory.path, configuration: .init(mapSize: 1 << 20, maxDatabases: 8))
    defer { environment.close() }
    let meta = try environment.openDatabase(named: "meta")
    try environment.write { txn in try txn.put(id, forKey: Array("log-id".utf8), in: meta) }
  }
}
