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
/// `navigation.dismiss`; see ``actionTypeName``). Its payload has the shape
/// Swift's `Codable` gives an enum case with labelled values: a map of one key,
/// the case, to a map of its values: `{"push": {"route": {"account": {"_0": "jenny"}}}}`,
/// `{"replaceStack": {"routes": [...]}}`, `{"dismiss": {}}`.
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
  private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    static var route: Key { Key("route") }
    static var routes: Key { Key("routes") }
  }

  /// Encodes the action as Swift encodes an enum case with labelled values: a map of one key, the
  /// case's name, to a map of its values (`{"push": {"route": …}}`, `{"replaceStack": {"routes": […]}}`,
  /// `{"dismiss": {}}`).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    var values = container.nestedContainer(keyedBy: Key.self, forKey: Key(caseName))
    switch self {
    case .push(let route), .popTo(let route), .present(let route), .fullScreen(let route):
      try values.encode(route, forKey: .route)
    case .replaceStack(let routes):
      try values.encode(routes, forKey: .routes)
    case .pop, .dismiss, .root:
      break
    }
  }

  /// Decodes what ``encode(to:)`` wrote; an unknown case, or a map of more than one case, is an error naming it.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    guard container.allKeys.count == 1, let key = container.allKeys.first else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: container.codingPath,
          debugDescription:
            "a navigation action is a map of one key, found \(container.allKeys.count): "
            + container.allKeys.map(\.stringValue).sorted().joined(separator: ", ")))
    }
    let values = try container.nestedContainer(keyedBy: Key.self, forKey: key)
    switch key.stringValue {
    case "push": self = .push(try values.decode(Route.self, forKey: .route))
    case "pop": self = .pop
    case "popTo": self = .popTo(try values.decode(Route.self, forKey: .route))
    case "present": self = .present(try values.decode(Route.self, forKey: .route))
    case "fullScreen": self = .fullScreen(try values.decode(Route.self, forKey: .route))
    case "dismiss": self = .dismiss
    case "root": self = .root
    case "replaceStack": self = .replaceStack(try values.decode([Route].self, forKey: .routes))
    default:
      throw DecodingError.dataCorruptedError(
        forKey: key, in: container, debugDescription: "unknown navigation action '\(key.stringValue)'")
    }
  }
}
