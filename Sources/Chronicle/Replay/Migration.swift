import ChronicleLog
import Foundation

/// Turns entries written with an older action schema into current actions.
///
/// Keep the old action type around (it only needs to be `Decodable`) and map it:
///
/// ```swift
/// enum ActionV1: Decodable { case add(Int), clear, legacyReset }
/// let migration = Migration(fromVersion: 1, decoding: ActionV1.self) { old -> Ledger.Action in
///   switch old {
///   case .add(let amount): .deposit(amount: amount, memo: nil)   // renamed, field added
///   case .clear, .legacyReset: .reset                             // removed case mapped
///   }
/// }
/// ```
///
/// A migration maps straight to the *current* action type. It applies to
/// entries of `fromVersion`, and only those of `typeName` when one is given.
public struct Migration: Sendable {
  /// The action schema version of the entries it converts.
  public let fromVersion: UInt32
  /// The entry type name it is limited to, or `nil` for all.
  public let typeName: String?
  let convert: @Sendable (PayloadCodec, UnsafeRawBufferPointer) throws -> any Sendable

  /// A migration that decodes the old payload as `Old` and converts it.
  public init<Old: Decodable & Sendable, Action: Sendable>(
    fromVersion: UInt32, typeName: String? = nil, decoding: Old.Type,
    _ transform: @escaping @Sendable (Old) throws -> Action
  ) {
    self.fromVersion = fromVersion
    self.typeName = typeName
    self.convert = { codec, bytes in try transform(try codec.decode(Old.self, from: bytes)) }
  }
}
