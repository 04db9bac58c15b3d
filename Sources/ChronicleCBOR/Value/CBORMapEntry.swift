import Foundation

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
  /// The entry's key; any CBOR value is allowed.
  public var key: CBORValue
  /// The entry's value.
  public var value: CBORValue

  /// Creates an entry from a key and a value.
  public init(key: CBORValue, value: CBORValue) {
    self.key = key
    self.value = value
  }
}
