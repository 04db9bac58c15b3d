import Chronicle

/// A layer of a ``Navigation``, from the bottom up.
public enum NavigationLayer: String, Codable, Hashable, Sendable, CaseIterable {
  /// The push stack (above the root screen).
  case stack
  /// The sheet (above the stack).
  case sheet
  /// The full-screen cover (above the sheet).
  case fullScreenCover
}
