import Chronicle
import ChronicleTestSupport
import Foundation
import ChronicleTestTools
import Testing

@Suite struct EffectTests {
  @Test func sendEffectsAreLoggedAsFromAnEffect() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    try store.send(.incrementTwice)
    #expect(store.state.count == 2)
    let history = try store.history
    #expect(history.map(\.action) == [.incrementTwice, .increment, .increment])
    #expect(history.map(\.isFromEffect) == [false, true, true])
    #expect(history.map(\.isUndoable) == [true, false, false])
  }

  @Test func runEffectsSendBackAndNeverRunDuringReplay() async throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let store = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    try await store.send(.fetch)
    #expect(store.state.isLoading)
    await store.waitForEffects()
    #expect(store.state.count == 42)
    #expect(!store.state.isLoading)
    #expect(try store.history.map(\.action) == [.fetch, .loaded(42)])
    try store.close()
    let reopened = try Store(initialState: Counter.State(), reducer: Counter(), log: .directory(dir.url))
    #expect(reopened.runningEffects == 0)
    #expect(reopened.state == Counter.State(count: 42, isLoading: false))
    #expect(reopened.lastSeq == 2)
    try reopened.close()
  }

  @Test func effectErrorsReachTheHandler() async throws {
    let errors = Recorder<String>()
    let store = try Store(
      initialState: Counter.State(), reducer: Counter(),
      options: StoreOptions(onEffectError: { errors.append("\($0)") }))
    try await store.send(.failingEffect)
    await store.waitForEffects()
    #expect(errors.values == ["the network is down"])
  }

  @Test func rejectedEffectActionsReachTheHandler() async throws {
    struct Spender: Reducer {
      typealias State = Int
      enum Action: Codable, Sendable { case spend, refund }
      func reduce(into state: inout Int, action: Action) -> Effect<Action> {
        switch action {
        case .spend:
          state -= 1
          return .send(.spend)  // keeps spending until the validator stops it
        case .refund: state += 1
        }
        return .none
      }
    }
    let errors = Recorder<String>()
    let store = try Store(
      initialState: 3, reducer: Spender(), options: StoreOptions(onEffectError: { errors.append("\($0)") }),
      validators: [Validator("not negative") { $0 >= 0 }])
    try await store.send(.spend)
    #expect(store.state == 0)
    #expect(store.lastSeq == 3)
    #expect(errors.values == ["rejected: not negative"])
  }

  @Test func cancellableEffectsCanBeCancelled() async throws {
    struct Timer: Reducer {
      typealias State = Int
      enum Action: Codable, Sendable { case start, stop, tick, restart }
      func reduce(into state: inout Int, action: Action) -> Effect<Action> {
        switch action {
        case .start, .restart:
          return .run { send in
            while true {
              try await Task.sleep(for: .milliseconds(2))
              send(.tick)
            }
          }
          .cancellable(id: "timer", cancelInFlight: action == .restart)
        case .stop: return .cancel(id: "timer")
        case .tick: state += 1
        }
        return .none
      }
    }
    let store = try Store(initialState: 0, reducer: Timer())
    /// Waits (up to 10 s, the machine may be busy) until the timer ticked past `count`.
    func waitForTicks(past count: Int) async throws {
      let deadline = ContinuousClock.now + .seconds(10)
      while store.state <= count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
    }
    try await store.send(.start)
    try await waitForTicks(past: 0)
    try await store.send(.restart)
    // The cancelled timer ends at its next suspension point; the new one keeps running.
    let deadline = ContinuousClock.now + .seconds(10)
    while store.runningEffects > 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
    #expect(store.runningEffects == 1, "restarting cancelled the running timer")
    try await waitForTicks(past: store.state)
    try await store.send(.stop)
    await store.waitForEffects()
    let stopped = store.state
    #expect(stopped > 0)
    try await Task.sleep(for: .milliseconds(20))
    #expect(store.state == stopped)
    #expect(store.runningEffects == 0)
  }

  @Test func middlewareSeesThePostReductionStateAndMaySend() throws {
    let seen = Recorder<String>()
    let audit = SideEffect<Counter.State, Counter.Action> { state, action in seen.append("\(action)->\(state.count)") }
    let bump = SideEffect<Counter.State, Counter.Action>(returning: { state, action in
      action == .set(5) ? .send(.increment) : .none
    })
    let store = try Store(initialState: Counter.State(), reducer: Counter(), middleware: [audit, bump])
    try store.send(.set(5))
    #expect(store.state.count == 6)
    #expect(seen.values == ["set(5)->5", "increment->6"])
    #expect(try store.history.map(\.isFromEffect) == [false, true])
  }
}
