import ChronicleLog
import Foundation

// MARK: - The worked example of docs/log-format.md §9

/// The five-entry log of the worked example in `docs/log-format.md` §9. `chronicle-fixtures
/// --worked-example` prints the page's numbers from it; the worked-example tests build it again and
/// compare every number the page prints.
public enum WorkedExample {
  /// The meta `app` value.
  public static let appID = "example"
  /// The fixed log identifier: bytes 0x00 … 0x0f.
  public static let logID: [UInt8] = Array(0..<16)
  /// The signing key's name.
  public static let keyName = "example.org/log"
  /// The **public test key**'s seed: bytes 0x00 … 0x1f. Never use it for anything real.
  public static let seed: [UInt8] = Array(0..<32)
  /// The entry whose inclusion proof the page shows, and the tree size.
  public static let inclusion = (seq: UInt64(3), size: UInt64(5))
  /// The tree sizes of the consistency proof the page shows.
  public static let consistency = (from: UInt64(3), to: UInt64(5))

  /// The test key.
  public static func signer() throws -> NoteSigner { try NoteSigner(name: keyName, seed: seed) }

  /// The five entries, with fixed timestamps one second apart from 2026-01-01T00:00:00Z.
  public static func entries() throws -> [NewEntry] {
    let start: Int64 = 1_767_225_600_000_000
    return [
      try NewEntry(
        encoding: CounterAction.increment, typeName: "increment", metadata: ["user": "ann"], codec: .json,
        timestamp: start),
      try NewEntry(encoding: CounterAction.set(5), typeName: "set", codec: .json, timestamp: start + 1_000_000),
      try NewEntry(
        flags: .fromEffect, encoding: CounterAction.increment, typeName: "increment", codec: .cbor,
        timestamp: start + 2_000_000),
      try NewEntry(
        kind: .undo, encoding: FixtureJumpTarget(target: 2), typeName: "undo", codec: .json,
        timestamp: start + 3_000_000),
      try NewEntry(
        kind: .marker, encoding: FixtureMarker(label: "audit", note: "checked"), typeName: "marker", codec: .json,
        timestamp: start + 4_000_000),
    ]
  }

  /// Writes the example's log into the missing or empty `directory`, with its fixed log identifier,
  /// and returns it open for writing (for its checkpoint).
  public static func writeLog(to directory: URL) throws -> ActionLog {
    let options = ActionLog.Options(durability: .full, flushInterval: nil, appID: appID)
    let log = try ActionLog(directory: directory, access: .readWrite, options: options)
    for entry in try entries() { try log.append(entry) }
    try log.close()
    try LogIdentity.replace(with: logID, in: directory)
    return try ActionLog(directory: directory, access: .readWrite, options: options)
  }
}
