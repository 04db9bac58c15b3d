import Foundation

extension Array where Element == UInt8 {
  /// Standard base64 (RFC 4648 §4) with padding and no line breaks, as Foundation writes it.
  package var base64: String { Data(self).base64EncodedString() }

  /// Parses standard base64 with padding; `nil` if `text` is not.
  package init?(base64 text: String) {
    guard let data = Data(base64Encoded: text) else { return nil }
    self = [UInt8](data)
  }
}
