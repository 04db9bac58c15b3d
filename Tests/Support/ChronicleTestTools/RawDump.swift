import Foundation
import ChronicleLMDB

// MARK: - A log's bytes

/// Every key and value of a log's three databases (the `log-id` meta record included), read through the LMDB module, to compare
/// logs byte for byte or to check that a failed operation changed nothing.
public struct RawDump: Equatable, Sendable {
  /// The `entries` database.
  public var entries: [[UInt8]: [UInt8]] = [:]
  /// The `snapshots` database.
  public var snapshots: [[UInt8]: [UInt8]] = [:]
  /// The `meta` database.
  public var meta: [[UInt8]: [UInt8]] = [:]

  /// Reads the log in `directory` (read-only; no writer may be changing it).
  public init(_ directory: URL) throws {
    let environment = try Environment(
      path: directory.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 4, flags: [.readOnly]))
    defer { environment.close() }
    for name in ["entries", "snapshots", "meta"] {
      let db = try environment.openDatabase(named: name)
      let pairs: [[UInt8]: [UInt8]] = try environment.read { txn in
        try txn.withCursor(on: db) { cursor in
          var pairs: [[UInt8]: [UInt8]] = [:]
          var item = try cursor.first()
          while let (key, value) = item {
            pairs[Array(key)] = Array(value)
            item = try cursor.next()
          }
          return pairs
        }
      }
      switch name {
      case "entries": entries = pairs
      case "snapshots": snapshots = pairs
      default:
        meta = pairs
      }
    }
  }

  /// Every key and value of the log's Merkle tree (`tree`) or checkpoint (`checkpoints`) database,
  /// empty when the log has none (a format-1 log no writer of this version has opened).
  public static func treeDatabase(_ name: String, of directory: URL) throws -> [[UInt8]: [UInt8]] {
    let environment = try Environment(
      path: directory.path, configuration: .init(mapSize: 1 << 30, maxDatabases: 8, flags: [.readOnly]))
    defer { environment.close() }
    let db: Database
    do { db = try environment.openDatabase(named: name) } catch let error as LMDBError where error.code == .notFound {
      return [:]
    }
    return try environment.read { txn in
      try txn.withCursor(on: db) { cursor in
        var pairs: [[UInt8]: [UInt8]] = [:]
        var item = try cursor.first()
        while let (key, value) = item {
          pairs[Array(key)] = Array(value)
          item = try cursor.next()
        }
        return pairs
      }
    }
  }
}
