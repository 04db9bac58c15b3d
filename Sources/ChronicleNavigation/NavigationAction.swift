import Chronicle

/// What a user (or the app) does to a ``Navigation``.
///
/// An app wraps it in a case of its own action, so navigation goes through the
/// same store, validators and log as everything else:
///
/// ```swift
/// enum AppAction: Codable, Sendable {
///   case navigation(NavigationAction<Screen>)
///   case signIn(String)
/// }
/// try store.send(.navigation(.push(.account("jenny"))))
/// ```
///
/// In the log each action is named `navigation.` and its case (`navigation.push`,
/// `navigation.dismiss`; see ``actionTypeName``), and its payload is a map of
/// one key, the case, to the route: `{"push": {"account": {"_0": "jenny"}}}`,
/// `{"replaceStack": [...]}`, or to an empty map for the cases without a route
/// (`{"dismiss": {}}`).
public enum NavigationAction<Route: Codable & Hashable & Sendable>: Hashable, Sendable {
  /// Pushes `route` on top of the stack.
  case push(Route)
  /// Pops the stack's top route (nothing at an empty stack). Sheet and cover stay.
  case pop
  /// Pops the routes above the last occurrence of `route` in the stack (nothing
  /// if it is not in the stack). Sheet and cover stay.
  case popTo(Route)
  /// Presents `route` as the sheet, replacing the sheet presented, if any.
  case present(Route)
  /// Presents `route` as the full-screen cover, replacing the cover presented, if any.
  case fullScreen(Route)
  /// Closes the topmost layer: the full-screen cover, else the sheet, else the
  /// stack's top route (see ``Navigation/topLayer``). Nothing at the root screen.
  case dismiss
  /// Back to the root screen: empties the stack and closes the sheet and the cover.
  case root
  /// Makes `routes` the whole stack and closes the sheet and the cover, so that
  /// the stack's top is what the user sees: for deep links, and for
  /// `NavigationStack(path:)` when the user goes back.
  case replaceStack([Route])

  /// The case's name: `push`, `pop`, `popTo`, `present`, `fullScreen`, `dismiss`, `root`, `replaceStack`.
  public var caseName: String {
    switch self {
    case .push: "push"
    case .pop: "pop"
    case .popTo: "popTo"
    case .present: "present"
    case .fullScreen: "fullScreen"
    case .dismiss: "dismiss"
    case .root: "root"
    case .replaceStack: "replaceStack"
    }
  }
}

// MARK: - Naming

extension NavigationAction: NamedAction {
  /// The type name recorded in the log: `navigation.` and the case, e.g. `navigation.push`.
  ///
  /// An app's action that wraps navigation names its entries after it:
  ///
  /// ```swift
  /// extension AppAction: NamedAction {
  ///   var actionTypeName: String {
  ///     switch self {
  ///     case .navigation(let action): action.actionTypeName
  ///     case .signIn: "signIn"
  ///     }
  ///   }
  /// }
  /// ```
  public var actionTypeName: String { "navigation.\(caseName)" }
}

// MARK: - Coding

extension NavigationAction: Codable {
  private struct CaseKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  /// An empty map: the value of the cases without a route.
  private struct Empty: Codable {}

  /// Encodes the action as a map of one key, the case's name, to its route, routes or an empty map.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CaseKey.self)
    let key = CaseKey(caseName)
    switch self {
    case .push(let route), .popTo(let route), .present(let route), .fullScreen(let route):
      try container.encode(route, forKey: key)
    case .replaceStack(let routes):
      try container.encode(routes, forKey: key)
    case .pop, .dismiss, .root:
      try container.encode(Empty(), forKey: key)
    }
  }

  /// Decodes what ``encode(to:)`` wrote; an unknown case or a map of more than one key is an error naming it.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CaseKey.self)
    guard container.allKeys.count == 1, let key = container.allKeys.first else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: container.codingPath,
          debugDescription:
            "a navigation action is a map of one key, found \(container.allKeys.count): "
            + container.allKeys.map(\.stringValue).sorted().joined(separator: ", ")))
    }
    switch key.stringValue {
    case "push": self = .push(try container.decode(Route.self, forKey: key))
    case "pop": _ = try container.decode(Empty.self, forKey: key); self = .pop
    case "popTo": self = .popTo(try container.decode(Route.self, forKey: key))
    case "present": self = .present(try container.decode(Route.self, forKey: key))
    case "fullScreen": self = .fullScreen(try container.decode(Route.self, forKey: key))
    case "dismiss": _ = try container.decode(Empty.self, forKey: key); self = .dismiss
    case "root": _ = try container.decode(Empty.self, forKey: key); self = .root
    case "replaceStack": self = .replaceStack(try container.decode([Route].self, forKey: key))
    default:
      throw DecodingError.dataCorruptedError(
        forKey: key, in: container, debugDescription: "unknown navigation action '\(key.stringValue)'")
    }
  }
}
