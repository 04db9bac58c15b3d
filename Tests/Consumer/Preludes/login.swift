// An app that logs in and then loads a profile.
import ChronicleTesting

private struct Credentials: Codable, Sendable, Equatable { var user = "jenny" }
private struct Profile: Codable, Sendable, Equatable { var name = "Jenny" }

private struct App: Reducer {
  struct State: Codable, Sendable, Equatable { var isLoggedIn = false; var profile: Profile? }
  enum Action: Codable, Sendable, Equatable { case login(Credentials), profileLoaded(Profile) }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .login:
      state.isLoggedIn = true
      return .send(.profileLoaded(Profile()))
    case .profileLoaded(let profile): state.profile = profile
    }
    return .none
  }
}

private func snippet(credentials: Credentials, profile: Profile) async throws {
// SNIPPET
}
