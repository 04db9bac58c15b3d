import Chronicle
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

/// Writes its fields in another order than `Codable`: the check must catch it.
private struct MisorderedPoint: CBORCodable, Equatable {
  var x: Int
  var y: Int

  init(x: Int, y: Int) { (self.x, self.y) = (x, y) }

  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: 2)
    writer.encode("y")
    writer.encode(y)
    writer.encode("x")
    writer.encode(x)
  }

  init(from reader: inout CBORReader) throws {
    try reader.expectMap(count: 2)
    try reader.expectKey("y")
    y = try reader.decode(Int.self)
    try reader.expectKey("x")
    x = try reader.decode(Int.self)
  }
}

@Suite struct CBORCodingCheckTests {
  @Test func reportsBytesThatDifferFromCodable() {
    withKnownIssue {
      expectCBORCodingMatchesCodable([MisorderedPoint(x: 1, y: 2)])
    } matching: { issue in
      let text = issue.comments.map(\.rawValue).joined(separator: "\n")
      return text.contains("CBORCodable writes other bytes than Codable for MisorderedPoint(x: 1, y: 2)")
        && text.contains("CBORCodable: a2 61 79 02 61 78 01") && text.contains("Codable:     a2 61 78 01 61 79 02")
    }
  }
}
