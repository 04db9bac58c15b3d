import Chronicle
import Foundation

/// A counter whose every change is an audited entry of its log.
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

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("core-consumer-\(getpid())")
defer { try? FileManager.default.removeItem(at: directory) }
let store = try Store(
  initialState: Counter.State(), reducer: Counter(), log: .directory(directory),
  options: StoreOptions(appID: "core-consumer"))
try store.send(.increment)
print("count \(store.state.count)")
try store.close()
