import Chronicle
import ChronicleTestSupport
import Testing

@Suite struct CatchPatternTests {
  /// The idiomatic way to handle a rejection compiles and works.
  @Test func catchingARejectionByPattern() throws {
    let store = try Store(initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft])
    var reason = ""
    do {
      try store.send(.transfer(from: "a", to: "b", cents: 1))
    } catch ChronicleError.rejected(let why) {
      reason = why
    }
    #expect(reason == "no account may go below zero")
  }
}
