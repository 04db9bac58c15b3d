import Chronicle

// MARK: - A counter with a large state

/// A counter with a large state (`items` strings), so that snapshots take a while to write:
/// `chronicle-probe store-send-state` runs it, and the reliability tests replay its logs.
public struct BigCounter: Reducer {
  /// The count and the strings.
  public struct State: Codable, Sendable, Equatable {
    /// The count.
    public var count: Int
    /// The strings that make the state large.
    public var items: [String]

    /// A state; empty by default.
    public init(count: Int = 0, items: [String] = []) {
      self.count = count
      self.items = items
    }
  }

  /// What the counter does.
  public enum Action: Codable, Sendable, Equatable {
    /// Adds one and rewrites one of the strings.
    case increment
  }

  /// The state of `items` strings every log of the reducer starts from.
  public static func initialState(items: Int) -> State {
    State(count: 0, items: (0..<items).map { "item \($0) of the reliability state" })
  }

  /// The state after `count` increments, computed without the log.
  public static func expected(items: Int, count: UInt64) -> State {
    var state = initialState(items: items)
    for _ in 0..<count { _ = BigCounter().reduce(into: &state, action: .increment) }
    return state
  }

  /// A counter.
  public init() {}

  /// Applies `action`.
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    state.count += 1
    if !state.items.isEmpty { state.items[state.count % state.items.count] = "set by \(state.count)" }
    return .none
  }
}
