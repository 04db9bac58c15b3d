// Cases of a reducer's `switch` over a search feature's actions.
import Chronicle

private enum SearchAction: Sendable { case search(String), results([String]), cancelSearch }

private enum API {
  static func search(_ query: String) async throws -> [String] { [query] }
}
private let api = API.self

private func reduce(into results: inout [String], action: SearchAction) -> Effect<SearchAction> {
  switch action {
  case .results(let found):
    results = found
    return .none
// SNIPPET
  }
}
