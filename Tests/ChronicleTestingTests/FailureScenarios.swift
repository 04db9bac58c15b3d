import Chronicle
import ChronicleTestSupport
import ChronicleTesting
import Foundation

/// Tests that go wrong on purpose, one per kind of failure a test store reports.
/// Both the XCTest and the Swift Testing suites run each one and check the
/// message and the line it points at.
enum FailureScenario: String, CaseIterable, Sendable {
  case stateMismatch
  case unassertedChange
  case closureMakesNoChange
  case wrongReceivedAction
  case predicateMismatch
  case unreceivedActionsAtFinish
  case effectsRunningAtFinish
  case receiveTimeout
  case unexpectedRejection
  case acceptedInsteadOfRejected
  case rejectedForAnotherReason
  case actionsPendingAtSend
  case effectError
  case nonDeterministicReducer
  case releasedWithUnreceivedActions
  case releasedWithRunningEffects

  /// Text the one reported failure must contain.
  var fragments: [String] {
    switch self {
    case .stateMismatch:
      [
        "The state after sending Counter.Action.increment is not the expected one: (\u{2212} expected, + actual)",
        "\u{2212}   count: 2,", "+   count: 1,",
      ]
    case .unassertedChange:
      ["The state changed after sending Counter.Action.increment, but no change was asserted", "+   count: 1"]
    case .closureMakesNoChange:
      ["Expected the state to change after sending Counter.Action.noop, but it did not"]
    case .wrongReceivedAction:
      [
        "Received another action than expected: (\u{2212} expected, + received)",
        "\u{2212} Counter.Action.loaded(41)", "+ Counter.Action.loaded(42)",
      ]
    case .predicateMismatch:
      ["Received Counter.Action.increment, which does not match the predicate."]
    case .unreceivedActionsAtFinish:
      ["2 actions sent back by effects were not received at finish():", "  Counter.Action.increment"]
    case .effectsRunningAtFinish:
      ["1 effect was still running after waiting 0.02 seconds at finish()"]
    case .receiveTimeout:
      [
        """
        Expected to receive Counter.Action.tick within 0.02 seconds, but no action was sent back \
        (1 effect still running).
        """
      ]
    case .unexpectedRejection:
      ["Sending Ledger.Action.withdraw(\"jenny\", cents: 500) was rejected: no account may go below zero"]
    case .acceptedInsteadOfRejected:
      [
        """
        Expected Ledger.Action.withdraw("jenny", cents: 500) to be rejected with "no account may go below zero", \
        but it was accepted as entry 2.
        """
      ]
    case .rejectedForAnotherReason:
      [
        """
        Expected Ledger.Action.deposit("donald", cents: 200000000) to be rejected with \
        "no account may go below zero", but it was rejected with "no account may hold a million".
        """
      ]
    case .actionsPendingAtSend:
      ["2 actions sent back by effects must be received before sending Counter.Action.decrement:"]
    case .effectError:
      ["An effect failed: the network is down"]
    case .nonDeterministicReducer:
      [
        "Replaying the log from the initial state does not reproduce entry 3 (Stamper.Action.stamp)",
        "Is the reducer deterministic?", "\u{2212}   stamp: 1", "+   stamp: 2",
      ]
    case .releasedWithUnreceivedActions:
      ["2 actions sent back by effects were not received when the TestStore was released:"]
    case .releasedWithRunningEffects:
      ["1 effect was still running when the TestStore was released."]
    }
  }

  /// Runs the failing test; returns the line the failure must point at.
  func run() async -> UInt {
    switch self {
    case .stateMismatch:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      let line: UInt = #line + 1
      await store.send(.increment) { $0.count = 2 }
      return line

    case .unassertedChange:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      let line: UInt = #line + 1
      await store.send(.increment)
      return line

    case .closureMakesNoChange:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      let line: UInt = #line + 1
      await store.send(.noop) { $0.count = 0 }
      return line

    case .wrongReceivedAction:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.fetch) { $0.isLoading = true }
      let line: UInt = #line + 1
      await store.receive(.loaded(41)) { $0.count = 41 }
      await store.finish()
      return line

    case .predicateMismatch:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.incrementTwice)
      let line: UInt = #line + 1
      await store.receive(where: { $0 == .decrement })
      await store.receive(.increment) { $0.count = 2 }
      return line

    case .unreceivedActionsAtFinish:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.incrementTwice)
      let line: UInt = #line + 1
      await store.finish()
      return line

    case .effectsRunningAtFinish:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.startTimer)
      let line: UInt = #line + 1
      await store.finish(timeout: .milliseconds(20))
      return line

    case .receiveTimeout:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.startTimer)
      let line: UInt = #line + 1
      await store.receive(.tick, timeout: .milliseconds(20)) { $0.count = 100 }
      await store.send(.stopTimer)
      await store.finish()
      return line

    case .unexpectedRejection:
      let store = TestStore(initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft])
      await store.send(.deposit("jenny", cents: 100)) { $0.balances["jenny"] = 100 }
      let line: UInt = #line + 1
      await store.send(.withdraw("jenny", cents: 500)) { $0.balances["jenny"] = -400 }
      return line

    case .acceptedInsteadOfRejected:
      let store = TestStore(initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft])
      await store.send(.deposit("jenny", cents: 1_000)) { $0.balances["jenny"] = 1_000 }
      let line: UInt = #line + 1
      await store.send(.withdraw("jenny", cents: 500), rejectedWith: "no account may go below zero")
      return line

    case .rejectedForAnotherReason:
      let store = TestStore(
        initialState: Ledger.State(), reducer: Ledger(), validators: [Ledger.noOverdraft, Ledger.noWhales])
      let line: UInt = #line + 1
      await store.send(.deposit("donald", cents: 200_000_000), rejectedWith: "no account may go below zero")
      return line

    case .actionsPendingAtSend:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.incrementTwice)
      let line: UInt = #line + 1
      await store.send(.decrement) { $0.count = 1 }
      return line

    case .effectError:
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.failingEffect)
      let line: UInt = #line + 1
      await store.finish()
      return line

    case .nonDeterministicReducer:
      let store = TestStore(initialState: Stamper.State(), reducer: Stamper(machine: TicketMachine()))
      await store.send(.add(1)) { $0.total = 1 }
      await store.send(.add(2)) { $0.total = 3 }
      await store.send(.stamp) { $0.stamp = 1 }
      let line: UInt = #line + 1
      store.assertReplayMatches()
      return line

    case .releasedWithUnreceivedActions:
      let line: UInt = #line + 1
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.incrementTwice)
      return line

    case .releasedWithRunningEffects:
      let line: UInt = #line + 1
      let store = TestStore(initialState: Counter.State(), reducer: Counter())
      await store.send(.startTimer)
      return line
    }
  }
}
