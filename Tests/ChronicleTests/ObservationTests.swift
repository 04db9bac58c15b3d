import Chronicle
import ChronicleTestSupport
import Dispatch
import Foundation
import Observation
import ChronicleTestTools
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
    try await store.send(.increment)
    try await store.send(.set(9))
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

  // MARK: - Observation framework

  @MainActor @Test func changesCommittedOffTheMainThreadAreAnnouncedOnTheMainActor() async throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    let announcements = Recorder<Bool>()
    withObservationTracking { _ = store.state } onChange: { announcements.append(onMainActor()) }
    let sentOnMainThread = try await Task.detached {
      try store.send(.increment)
      return onMainActor()
    }.value
    #expect(!sentOnMainThread)
    try await waitUntil { !announcements.values.isEmpty }
    #expect(announcements.values == [true])
  }

  @MainActor @Test func changesFromEffectsAreAnnouncedOnTheMainActor() async throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    try await store.send(.fetch)  // announced at once: sent on the main thread
    let announcements = Recorder<Bool>()
    withObservationTracking { _ = store.state.count } onChange: { announcements.append(onMainActor()) }
    try await waitUntil { !announcements.values.isEmpty }  // `.loaded(42)`, committed by the effect's task
    #expect(announcements.values == [true])
    #expect(store.state.count == 42)
  }

  @MainActor @Test func changesCommittedOnTheMainThreadAreAnnouncedBeforeSendReturns() throws {
    let store = try Store(initialState: Counter.State(), reducer: Counter())
    let announcements = Recorder<Bool>()
    withObservationTracking { _ = store.canUndo } onChange: { announcements.append(onMainActor()) }
    try store.send(.increment)
    #expect(announcements.values == [true])
  }

  @Test func committingThreadDeliveryAnnouncesBeforeSendReturns() async throws {
    var options = StoreOptions()
    options.observationDelivery = .committingThread
    let store = try Store(initialState: Counter.State(), reducer: Counter(), options: options)
    let announcements = Recorder<Bool>()
    withObservationTracking { _ = store.state } onChange: { announcements.append(onMainActor()) }
    let seenWhenSendReturned = try await Task.detached {
      try store.send(.increment)
      return announcements.values
    }.value
    #expect(seenWhenSendReturned == [false])
  }

  @MainActor @Test func scopedStoresAnnounceOnlyChangesOfTheirPart() async throws {
    let store = try Store(initialState: Titled.State(), reducer: Titled())
    let counter = store.scope(state: \.counter, action: Titled.Action.counter)
    let count = counter.scope(state: \.count, action: { (value: Int) in Counter.Action.set(value) })
    let counterChanges = Recorder<Int>()
    let countChanges = Recorder<Int>()
    withObservationTracking { _ = counter.state } onChange: { counterChanges.append(1) }
    withObservationTracking { _ = count.state } onChange: { countChanges.append(1) }
    try await store.send(.rename("ledger"))  // another part of the root's state
    try await counter.send(.fetch)  // only `isLoading`: the counter changes, its count does not
    #expect(counterChanges.values.count == 1)
    #expect(countChanges.values.isEmpty)
    withObservationTracking { _ = counter.state } onChange: { counterChanges.append(1) }
    try await waitUntil { counterChanges.values.count == 2 }  // the effect's `.loaded(42)`, off the main thread
    #expect(countChanges.values.count == 1)
    #expect(count.state == 42)
  }

  @MainActor @Test func scopedStoresOfStatesThatAreNotEquatableAnnounceEveryChange() throws {
    let store = try Store(initialState: Titled.State(), reducer: Titled())
    let counted = store.scope(state: \.counter.counted, action: Titled.Action.counter)
    let announcements = Recorder<Int>()
    withObservationTracking { _ = counted.state } onChange: { announcements.append(1) }
    try store.send(.rename("ledger"))  // its part cannot be compared: announced anyway
    #expect(announcements.values.count == 1)
    #expect(counted.state.count == 0)
  }

  @MainActor @Test func derivedValuesAnnounceOnlyRealChanges() async throws {
    let store = try Store(initialState: Ledger.State(), reducer: Ledger())
    let total = store.derive { $0.balances.values.reduce(0, +) }
    let announcements = Recorder<Bool>()
    withObservationTracking { _ = total.value } onChange: { announcements.append(onMainActor()) }
    try await store.send(.deposit("a", cents: 10))
    #expect(announcements.values == [true])
    withObservationTracking { _ = total.value } onChange: { announcements.append(onMainActor()) }
    try await store.send(.transfer(from: "a", to: "b", cents: 4))  // the total is unchanged
    #expect(announcements.values == [true])
    _ = try await Task.detached { try store.send(.deposit("b", cents: 5)) }.value
    try await waitUntil { announcements.values.count == 2 }
    #expect(announcements.values == [true, true])
    #expect(total.value == 15)
  }
}

/// A counter's count as a state that is not `Equatable`.
private struct Counted: Sendable { var count: Int }

extension Counter.State {
  fileprivate var counted: Counted { Counted(count: count) }
}

/// A counter beside another part of the state.
private struct Titled: Reducer {
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

/// Suspends (letting the main actor run) until `condition` holds, for at most 10 s.
@MainActor private func waitUntil(_ condition: () -> Bool) async throws {
  let deadline = ContinuousClock.now + .seconds(10)
  while !condition() {
    guard ContinuousClock.now < deadline else {
      Issue.record("the condition did not hold within 10 s")
      return
    }
    try await Task.sleep(for: .milliseconds(2))
  }
}


/// Marks the main dispatch queue, the main actor's executor.
private let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

/// Whether the caller runs on the main actor (the main dispatch queue; on Linux
/// test runners its thread is not the process's main thread).
private func onMainActor() -> Bool { DispatchQueue.getSpecific(key: mainQueueKey) == true }
