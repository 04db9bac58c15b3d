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

/// The type name recorded for `action`: its ``NamedAction/actionTypeName``, the
/// enum case's name (`increment`, `set`), or the type's name for a non-enum.
func actionTypeName<Action>(_ action: Action) -> String {
  if let named = action as? any NamedAction { return named.actionTypeName }
  let mirror = Mirror(reflecting: action)
  guard mirror.displayStyle == .enum else { return String(describing: Action.self) }
  if let label = mirror.children.first?.label { return label }
  return String(describing: action)
}
