import Chronicle
import Foundation
import Testing

@Suite struct ObservationTests {
  @Test func subscribersSeeNewAndOldInOrder() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    let changes = Recorder<String>()
    let token = store.subscribe { new, old in changes.append("\(old.count)->\(new.count)") }
    try store.send(.increment)
    try store.send(.set(7))
    token.cancel()
    try store.send(.reset)
    #expect(changes.values == ["0->1", "1->7"])
  }

  @Test func sendsFromObserversAreQueuedNotInterleaved() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    let order = Recorder<String>()
    let first = store.subscribe { new, _ in
      order.append("A\(new.count)")
      if new.count == 1 { _ = try? store.send(.increment) }
    }
    let second = store.subscribe { new, _ in order.append("B\(new.count)") }
    try store.send(.increment)
    #expect(order.values == ["A1", "B1", "A2", "B2"])
    #expect(store.state.count == 2)
    first.cancel()
    second.cancel()
  }

  @Test func statesStreamsTheCurrentStateThenEachNewOne() async throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    var iterator = store.states.makeAsyncIterator()
    #expect(await iterator.next()?.count == 0)
    try store.send(.increment)
    try store.send(.set(9))
    #expect(await iterator.next()?.count == 1)
    #expect(await iterator.next()?.count == 9)
  }

  @Test func derivedValuesNotifyOnlyOnChange() throws {
    let store = try Store(initialState: Ledger.State(), reducer: Ledger())
    let total = store.derive { $0.balances.values.reduce(0, +) }
    let seen = Recorder<Int>()
    let token = total.subscribe { new, _ in seen.append(new) }
    try store.send(.deposit("a", cents: 10))
    try store.send(.transfer(from: "a", to: "b", cents: 4))  // total unchanged
    try store.send(.open("c"))  // unchanged
    try store.send(.deposit("c", cents: 5))
    #expect(seen.values == [10, 15])
    #expect(total.value == 15)
    token.cancel()
  }

  @Test func scopedStoresReadAndSendThroughTheParent() throws {
    struct App: Reducer {
      struct State: Codable, Sendable, Equatable { var counter = Counter.State(); var title = "" }
      enum Action: Codable, Sendable, Equatable { case counter(Counter.Action), rename(String) }
      func reduce(into state: inout State, action: Action) -> Effect<Action> {
        switch action {
        case .counter(let action): return Counter().reduce(into: &state.counter, action: action).map(Action.counter)
        case .rename(let title): state.title = title
        }
        return .none
      }
    }
    let store = try Store(initialState: App.State(), reducer: App())
    let counter = store.scope(state: \.counter, action: App.Action.counter)
    let seen = Recorder<Int>()
    let token = counter.subscribe { new, _ in seen.append(new.count) }
    #expect(try counter.send(.increment) == 1)
    try store.send(.rename("x"))
    #expect(counter.state.count == 1)
    #expect(store.state.counter.count == 1)
    #expect(try store.history.map(\.action) == [.counter(.increment), .rename("x")])
    #expect(seen.values == [1, 1])
    let count = counter.scope(state: \.count, action: { (n: Int) in Counter.Action.set(n) })
    try count.send(5)
    #expect(count.state == 5)
    token.cancel()
  }
}
