// The guide's counter (without its fetch), for a block of declarations that
// use it. It declares `Counter` for the whole module, so the later blocks of
// the same document use it too; only one block of a document may use it.
import Chronicle

struct Counter: Reducer {
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

// SNIPPET
