// An app with a counter, balances and a settings feature, and a store of it.
import Chronicle

private struct App: Reducer {
  struct Settings: Codable, Sendable, Equatable { var isDark = false }
  struct State: Codable, Sendable, Equatable {
    var count = 0
    var balances: [String: Int] = [:]
    var settings = Settings()
  }
  enum SettingsAction: Codable, Sendable, Equatable { case toggleDark }
  enum Action: Codable, Sendable, Equatable { case increment, settings(SettingsAction) }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .settings(.toggleDark): state.settings.isDark.toggle()
    }
    return .none
  }
}

private func render(_ state: App.State) {}

private func snippet(store: Store<App.State, App.Action>) async throws {
// SNIPPET
}
