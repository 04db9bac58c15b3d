import Foundation

/// Malformed CBOR: what is wrong and at which byte offset of the input.
public struct CBORError: Error, CustomStringConvertible, Sendable, Equatable {
  /// Byte offset in the input at which the problem was detected.
  public var offset: Int
  /// Human-readable explanation, e.g. `"invalid UTF-8 in text string"`.
  public var reason: String

  /// Creates an error for `offset` with the given explanation.
  public init(offset: Int, reason: String) {
    self.offset = offset
    self.reason = reason
  }

  /// `"CBOR error at byte <offset>: <reason>"`.
  public var description: String {
    "CBOR error at byte \(offset): \(reason)"
  }
}
