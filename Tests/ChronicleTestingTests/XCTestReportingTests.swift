import Chronicle
import ChronicleTestSupport
import ChronicleTesting
import XCTest

/// The same failures, seen from XCTest. XCTest on Linux has no
/// `XCTExpectFailure`, so the issues are collected with IssueReporting's
/// `withIssueReporters` and checked one by one.
final class XCTestReportingTests: XCTestCase {
  func check(_ scenario: FailureScenario, file: StaticString = #filePath, line: UInt = #line) async {
    var expectedLine: UInt = 0
    let issues = await collectIssues { expectedLine = await scenario.run() }
    XCTAssertEqual(issues.count, 1, "\(scenario): \(issues.map(\.message))", file: file, line: line)
    guard let issue = issues.first else { return }
    for fragment in scenario.fragments {
      XCTAssertTrue(
        issue.message.contains(fragment), "\(scenario): «\(fragment)» is not in «\(issue.message)»", file: file,
        line: line)
    }
    XCTAssertEqual(issue.line, expectedLine, "\(scenario)", file: file, line: line)
    XCTAssertEqual(issue.fileID, "ChronicleTestingTests/FailureScenarios.swift", file: file, line: line)
  }

  func testStateMismatch() async { await check(.stateMismatch) }
  func testUnassertedChange() async { await check(.unassertedChange) }
  func testClosureMakesNoChange() async { await check(.closureMakesNoChange) }
  func testWrongReceivedAction() async { await check(.wrongReceivedAction) }
  func testPredicateMismatch() async { await check(.predicateMismatch) }
  func testUnreceivedActionsAtFinish() async { await check(.unreceivedActionsAtFinish) }
  func testEffectsRunningAtFinish() async { await check(.effectsRunningAtFinish) }
  func testReceiveTimeout() async { await check(.receiveTimeout) }
  func testUnexpectedRejection() async { await check(.unexpectedRejection) }
  func testAcceptedInsteadOfRejected() async { await check(.acceptedInsteadOfRejected) }
  func testRejectedForAnotherReason() async { await check(.rejectedForAnotherReason) }
  func testActionsPendingAtSend() async { await check(.actionsPendingAtSend) }
  func testEffectError() async { await check(.effectError) }
  func testNonDeterministicReducer() async { await check(.nonDeterministicReducer) }
  func testReleasedWithUnreceivedActions() async { await check(.releasedWithUnreceivedActions) }
  func testReleasedWithRunningEffects() async { await check(.releasedWithRunningEffects) }

  func testEveryScenarioHasATest() {
    XCTAssertEqual(FailureScenario.allCases.count, 16, "add a test method for the new scenario")
  }

  /// A passing test written with XCTest: failures would reach XCTest through IssueReporting.
  func testCounterWithFetch() async {
    let store = TestStore(initialState: Counter.State(), reducer: Counter())
    await store.send(.increment) { $0.count = 1 }
    await store.send(.fetch) { $0.isLoading = true }
    await store.receive(.loaded(42)) {
      $0.isLoading = false
      $0.count = 42
    }
    await store.finish()
    store.assertReplayMatches()
  }
}
