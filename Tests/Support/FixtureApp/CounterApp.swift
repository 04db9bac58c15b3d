import ChronicleLog

// MARK: - The counter app of fixtures/v1-counter

/// The state the fixture's actions fold into.
public struct CounterState: Codable, Equatable, Sendable {
  /// The count.
  public var count: Int

  /// A state; zero by default.
  public init(count: Int = 0) { self.count = count }
}

/// The fixture's actions; each entry's type name is the case name.
public enum CounterAction: Codable, Equatable, Sendable {
  /// Changes the count by one.
  case increment, decrement
  /// Sets the count to zero.
  case reset
  /// Sets the count.
  case set(Int)
}

/// The payload of the fixture's `.marker` entries (type name `marker`).
public struct FixtureMarker: Codable, Equatable, Sendable {
  /// The marker's label.
  public var label: String
  /// A note beyond ASCII.
  public var note: String

  /// A marker.
  public init(label: String, note: String) {
    self.label = label
    self.note = note
  }
}

extension CounterState {
  /// The fold: actions change the count, markers leave it alone.
  public mutating func apply(_ action: CounterAction) {
    switch action {
    case .increment: count += 1
    case .decrement: count -= 1
    case .reset: count = 0
    case .set(let value): count = value
    }
  }
}

extension CounterAction {
  /// The type name stored with the entry: the case name.
  public var typeName: String {
    switch self {
    case .increment: "increment"
    case .decrement: "decrement"
    case .reset: "reset"
    case .set: "set"
    }
  }
}
