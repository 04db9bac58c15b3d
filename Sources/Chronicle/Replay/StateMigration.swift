import ChronicleLog
import Foundation

/// Turns a snapshot written with an older state schema into the current `State`.
///
/// When `State`'s encoding changes (a field added, renamed or retyped), raise
/// ``StoreOptions/stateSchemaVersion`` and keep the old state type around (it only
/// needs to be `Decodable`) to convert old snapshots:
///
/// ```swift
/// struct LedgerStateV1: Decodable, Sendable { var balances: [String: Int] }
///
/// var options = StoreOptions(stateSchemaVersion: 2, appID: "ledger")
/// options.stateMigrations = [
///   StateMigration(fromVersion: 1, decoding: LedgerStateV1.self) { old in
///     Ledger.State(balances: old.balances, auditNotes: [])   // the new field starts empty
///   }
/// ]
/// ```
///
/// A migration maps straight to the *current* state type. Recovery, ``Store/state(at:)``
/// and undo use a migrated snapshot like one of the current version; the snapshot itself
/// is left as it was written. It matters most for a compacted log, whose oldest snapshot
/// stands in for the entries removed before it: without a migration from its version,
/// a log compacted by an older version of the app does not open.
public struct StateMigration: Sendable {
  /// The state schema version of the snapshots it converts.
  public let fromVersion: UInt32
  /// The name of the state type it makes, for errors.
  let stateTypeName: String
  let convert: @Sendable (PayloadCodec, [UInt8]) throws -> any Sendable

  /// A migration that decodes the old snapshot's state as `Old` and converts it.
  ///
  /// - Parameters:
  ///   - fromVersion: the state schema version of the snapshots to convert.
  ///   - decoding: the state type as it was in that version.
  ///   - transform: makes the current state from the old one.
  public init<Old: Decodable & Sendable, State: Sendable>(
    fromVersion: UInt32, decoding: Old.Type, _ transform: @escaping @Sendable (Old) throws -> State
  ) {
    self.fromVersion = fromVersion
    self.stateTypeName = "\(State.self)"
    self.convert = { codec, bytes in try transform(try codec.decode(Old.self, from: bytes)) }
  }
}
