import ChronicleTesting
import Synchronization
import Testing

/// Every kind of failure reaches Swift Testing as a known issue with a clear
/// message, at the line of the call that failed.
@Suite struct FailureReportingTests {
  @Test(arguments: FailureScenario.allCases)
  func reportsTheFailure(_ scenario: FailureScenario) async {
    let lines = Mutex<[Int]>([])
    let fragments = scenario.fragments
    var expectedLine: UInt = 0
    await withKnownIssue {
      expectedLine = await scenario.run()
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined(separator: "\n")
      guard fragments.allSatisfy(text.contains) else { return false }
      lines.withLock { $0.append(issue.sourceLocation?.line ?? 0) }
      return true
    }
    #expect(lines.withLock { $0 } == [Int(expectedLine)])
  }

  @Test func issuesPointAtTheTestFile() async {
    await withKnownIssue {
      _ = await FailureScenario.stateMismatch.run()
    } matching: { issue in
      issue.sourceLocation?.fileID == "ChronicleTestingTests/FailureScenarios.swift"
    }
  }
}
