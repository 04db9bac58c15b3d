import Chronicle

/// Where the user is in an app: a push stack, a sheet and a full-screen
/// cover, over an app's own route type. It is state like any other: kept in
/// the app's state, changed only by ``NavigationAction``s sent through the
/// store, so every screen the user opens is logged, recovered after a crash,
/// undoable and visible in time travel and the audit trail.
///
/// ```swift
/// enum Screen: Codable, Hashable, Sendable {
///   case accounts
///   case account(String)
///   case settings
/// }
///
/// var navigation = Navigation<Screen>()
/// navigation.apply(.push(.accounts))
/// navigation.apply(.push(.account("jenny")))
/// navigation.apply(.present(.settings))
/// navigation.topLayer      // .sheet: what `dismiss` closes first
/// navigation.visibleRoute  // .settings: the screen in front
/// navigation.topRoute      // .account("jenny"): the stack is checked first
/// ```
///
/// ## Layers
///
/// The root screen is always there and is not a route. Above it, from the
/// bottom up: the push ``stack`` (its last route on top), the ``sheet``, and
/// the ``fullScreenCover``. Each layer holds what it holds independently of the
/// others:
/// - `dismiss` closes the topmost layer: the full-screen cover if one is
///   presented, else the sheet, else it pops the stack's top route
///   (``topLayer`` names that layer, ``visibleRoute`` its route);
/// - presenting a sheet while a sheet is presented **replaces** it (as SwiftUI's
///   `sheet(item:)` does when its item changes); the same holds for the cover.
///
/// ## `topRoute`
///
/// ``topRoute`` keeps the precedence of the router Chronicle's navigation
/// replaces: the stack's top route if the stack is not empty, else the
/// full-screen cover, else the sheet, else `nil` (the root screen). It answers
/// "which route did the user navigate to last in the stack, or present if
/// nothing was pushed"; it differs from ``visibleRoute`` when a sheet or cover
/// is presented over a pushed route.
public struct Navigation<Route: Codable & Hashable & Sendable>: Codable, Hashable, Sendable {
  /// The pushed routes, bottom first: the last one is shown on top of the root screen.
  public var stack: [Route]
  /// The route presented as a sheet, if any.
  public var sheet: Route?
  /// The route presented as a full-screen cover, if any (above the sheet).
  public var fullScreenCover: Route?

  /// A navigation at the root screen, or at the given routes.
  public init(stack: [Route] = [], sheet: Route? = nil, fullScreenCover: Route? = nil) {
    self.stack = stack
    self.sheet = sheet
    self.fullScreenCover = fullScreenCover
  }

  // MARK: - Reading

  /// The stack's top route, else the full-screen cover, else the sheet; `nil` at the root screen.
  ///
  /// See "`topRoute`" in the type's documentation for how this differs from ``visibleRoute``.
  public var topRoute: Route? { stack.last ?? fullScreenCover ?? sheet }

  /// The layer in front, the one ``NavigationAction/dismiss`` closes: the
  /// full-screen cover, else the sheet, else the stack; `nil` at the root screen.
  public var topLayer: NavigationLayer? {
    if fullScreenCover != nil { return .fullScreenCover }
    if sheet != nil { return .sheet }
    return stack.isEmpty ? nil : .stack
  }

  /// The route of the layer in front (``topLayer``): the screen the user sees; `nil` at the root screen.
  public var visibleRoute: Route? { fullScreenCover ?? sheet ?? stack.last }

  /// Whether nothing is pushed or presented: the user is on the root screen.
  public var isAtRoot: Bool { stack.isEmpty && sheet == nil && fullScreenCover == nil }

  /// Every route open, from the bottom up: the stack, then the sheet, then the full-screen cover.
  public var routes: [Route] {
    var routes = stack
    if let sheet { routes.append(sheet) }
    if let fullScreenCover { routes.append(fullScreenCover) }
    return routes
  }

  // MARK: - Changing

  /// Applies `action`, as ``NavigationReducer`` does. An app's reducer calls it
  /// to navigate as part of another action (for example, back to the root on sign-out).
  ///
  /// Actions that have nothing to act on (`pop` at the root, `popTo` a route
  /// not in the stack, `dismiss` with nothing open) leave the navigation as it is.
  public mutating func apply(_ action: NavigationAction<Route>) {
    switch action {
    case .push(let route):
      stack.append(route)
    case .pop:
      _ = stack.popLast()
    case .popTo(let route):
      guard let index = stack.lastIndex(of: route) else { return }
      stack.removeSubrange((index + 1)...)
    case .present(let route):
      sheet = route
    case .fullScreen(let route):
      fullScreenCover = route
    case .dismiss:
      switch topLayer {
      case .fullScreenCover: fullScreenCover = nil
      case .sheet: sheet = nil
      case .stack: stack.removeLast()
      case nil: break
      }
    case .root:
      self = Navigation()
    case .replaceStack(let routes):
      self = Navigation(stack: routes)
    }
  }
}
