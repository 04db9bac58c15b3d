import Chronicle

// MARK: - The counter

/// The counter of the guide, with effects of every kind: the reducer most engine tests run.
///
/// `chronicle-probe store-send` runs it too, so tests reopen the logs the probe wrote.
public struct Counter: Reducer {
  /// The count, and whether a fetch is under way.
  public struct State: Codable, Sendable, Equatable {
    /// The count.
    public var count: Int
    /// Whether a `.fetch` waits for its `.loaded`.
    public var isLoading: Bool

    /// A state; zero and idle by default.
    public init(count: Int = 0, isLoading: Bool = false) {
      self.count = count
      self.isLoading = isLoading
    }
  }

  /// What the counter does.
  public enum Action: Codable, Sendable, Equatable {
    /// Changes the count by one.
    case increment, decrement
    /// Sets the count to zero.
    case reset
    /// Sets the count.
    case set(Int)
    /// Changes nothing.
    case noop
    /// Starts an effect that sends `.loaded(42)` a moment later.
    case fetch
    /// The fetch's answer.
    case loaded(Int)
    /// An effect that sends `.increment` twice.
    case incrementTwice
    /// A cancellable effect that sends `.tick` after a minute; `.stopTimer` cancels it.
    case startTimer, stopTimer
    /// Adds 100.
    case tick
    /// An effect that throws ``NetworkDown``.
    case failingEffect
  }

  /// The cancellation identifier of the timer effect.
  public static let timerID = "timer"

  /// A counter.
  public init() {}

  /// Applies `action`.
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .decrement: state.count -= 1
    case .reset: state.count = 0
    case .set(let value): state.count = value
    case .noop: break
    case .fetch:
      state.isLoading = true
      return .run { send in
        try await Task.sleep(for: .milliseconds(5))
        send(.loaded(42))
      }
    case .loaded(let value):
      state.isLoading = false
      state.count = value
    case .incrementTwice:
      return .merge(.send(.increment), .send(.increment))
    case .startTimer:
      return .run { send in
        try await Task.sleep(for: .seconds(60))
        send(.tick)
      }
      .cancellable(id: Self.timerID)
    case .stopTimer:
      return .cancel(id: Self.timerID)
    case .tick:
      state.count += 100
    case .failingEffect:
      return .run { _ in throw NetworkDown() }
    }
    return .none
  }
}

/// The error `Counter`'s `.failingEffect` throws.
public struct NetworkDown: Error, CustomStringConvertible {
  /// An error.
  public init() {}
  /// "the network is down".
  public var description: String { "the network is down" }
}
