import ChronicleLog

/// An action that names itself in the log (otherwise the enum case name is used).
///
/// ```swift
/// extension Ledger.Action: NamedAction {
///   var actionTypeName: String { "ledger.\(caseName)" }
/// }
/// ```
public protocol NamedAction {
  /// The type name recorded with the entry.
  var actionTypeName: String { get }
}

/// Works out the type name recorded for each action: its
/// ``NamedAction/actionTypeName``, the enum case's name (`increment`, `set`), or
/// the type's name for a non-enum.
///
/// Reflection is slow on the send path, so it runs once per action type (the
/// first action tells whether the type is an enum); for enums with associated
/// values or none, the case name is then read from the encoded payload, where
/// Codable writes it as the only key of a map.
@usableFromInline struct ActionNamer<Action>: Sendable {
  @usableFromInline let namesItself = Action.self is any NamedAction.Type
  /// Whether `Action` is an enum, once the first action was seen.
  @usableFromInline var isEnum: Bool?

  init() {}

  @inlinable
  mutating func name(of action: Action, payload: [UInt8], codec: PayloadCodec) -> String {
    if namesItself, let named = action as? any NamedAction { return named.actionTypeName }
    if isEnum == nil { isEnum = Mirror(reflecting: action).displayStyle == .enum }
    guard isEnum == true else { return String(describing: Action.self) }
    if let key = Self.caseKey(payload, codec) { return key }
    return Mirror(reflecting: action).children.first?.label ?? String(describing: action)
  }

  /// The first key of a map whose key is a short text: `{"name": …}` in JSON, `A1 6x name …` in CBOR
  /// (an enum's encoding has exactly one).
  @usableFromInline
  static func caseKey(_ payload: [UInt8], _ codec: PayloadCodec) -> String? {
    switch codec {
    case .cbor:
      // A1: a map of one pair; 0x60 + n (n < 24): a text string of n bytes.
      guard payload.count >= 2, payload[0] == 0xA1, payload[1] >= 0x60, payload[1] < 0x78 else { return nil }
      let count = Int(payload[1] - 0x60)
      guard payload.count >= 2 + count + 1 else { return nil }
      return text(payload[2..<(2 + count)])
    case .json:
      // {"name":{…}} with no other key at the top level.
      guard payload.count >= 5, payload[0] == UInt8(ascii: "{"), payload[1] == UInt8(ascii: "\"") else { return nil }
      guard let end = payload[2...].firstIndex(of: UInt8(ascii: "\"")), end + 1 < payload.count,
        payload[end + 1] == UInt8(ascii: ":"), !payload[2..<end].contains(UInt8(ascii: "\\"))
      else { return nil }
      return text(payload[2..<end])
    }
  }

  /// The UTF-8 text in `bytes`, or `nil` if it is not valid (ASCII, the common case, skips the generic validation).
  @usableFromInline
  static func text(_ bytes: ArraySlice<UInt8>) -> String? {
    bytes.allSatisfy { $0 < 0x80 } ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
  }
}
