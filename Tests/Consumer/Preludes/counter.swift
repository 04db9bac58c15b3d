// The guide's counter (without its fetch), for a block of statements.
import Chronicle

private struct Counter: Reducer {
  struct State: Codable, Sendable, Equatable { var count = 0 }
  enum Action: Codable, Sendable, Equatable { case increment, decrement }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .decrement: state.count -= 1
    }
    return .none
  }
}

private func snippet() async throws {
// SNIPPET
}
