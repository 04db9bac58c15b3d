// A reducer that is not deterministic: it reads a counter of its own.
import ChronicleTesting
import Synchronization

private let stamps = Atomic<Int>(0)

private struct Stamper: Reducer {
  struct State: Codable, Sendable, Equatable { var total = 0; var stamp = 0 }
  enum Action: Codable, Sendable, Equatable { case add(Int), stamp }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .add(let amount): state.total += amount
    case .stamp: state.stamp = stamps.add(1, ordering: .relaxed).newValue
    }
    return .none
  }
}

private func snippet(store: TestStore<Stamper.State, Stamper.Action>) async throws {
// SNIPPET
}
