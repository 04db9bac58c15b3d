import ChronicleLog

/// An action that names itself in the log (otherwise the enum case's path is used).
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
