import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

@Suite struct JumpResolutionTests {
  private func jump(_ kind: EntryKind, to target: UInt64, codec: PayloadCodec = .cbor) throws -> NewEntry {
    try NewEntry(kind: kind, encoding: ["target": target], typeName: kind.description, codec: codec)
  }

  private func action(_ name: String) throws -> NewEntry {
    try NewEntry(encoding: ["amount": 1], typeName: name, codec: .json)
  }

  /// 1 open, 2 deposit, 3 undo → 1, 4 redo → 2, 5 undo → 3 (an undo of the state an undo made),
  /// 6 restore → 5, 7 marker, 8 restore → 0, 9 undo → 7.
  @Test func jumpsResolveToTheOriginalEntries() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let log = try ActionLog(directory: directory.url)
    defer { try? log.close() }
    try log.append(contentsOf: [
      try action("open"), try action("deposit"), try jump(.undo, to: 1), try jump(.redo, to: 2, codec: .json),
      try jump(.undo, to: 3), try jump(.restore, to: 5),
      NewEntry(kind: .marker, typeName: "checkpoint", codec: .json, payload: Array("{}".utf8)),
      try jump(.restore, to: 0), try jump(.undo, to: 7),
    ])
    let records = try log.records(in: 1...9)
    let resolved = try records.map { try log.resolveJump($0) }
    #expect(resolved[0] == nil && resolved[1] == nil && resolved[6] == nil)
    #expect(resolved[2] == JumpResolution(target: 1, state: 1, chain: [1], stateTypeName: "open", isComplete: true))
    #expect(resolved[3] == JumpResolution(target: 2, state: 2, chain: [2], stateTypeName: "deposit", isComplete: true))
    #expect(resolved[4] == JumpResolution(target: 3, state: 1, chain: [3, 1], stateTypeName: "open", isComplete: true))
    #expect(
      resolved[5] == JumpResolution(target: 5, state: 1, chain: [5, 3, 1], stateTypeName: "open", isComplete: true))
    #expect(resolved[7] == JumpResolution(target: 0, state: 0, chain: [0], stateTypeName: nil, isComplete: true))
    #expect(resolved[7]?.summary == "initial state")
    #expect(
      resolved[8] == JumpResolution(target: 7, state: 7, chain: [7], stateTypeName: "checkpoint", isComplete: true))
    #expect(resolved[5]?.summary == "state after 1 (open)")
  }

  /// A target the log does not hold (or one that is not before the jump) ends the chain, marked incomplete.
  @Test func missingOrForwardTargetsAreIncomplete() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    // `append` refuses a forward target: write entry 2 as a writer that broke the rule would.
    let writer = try ActionLog(directory: directory.url)
    try writer.append(contentsOf: [try action("open"), try jump(.undo, to: 1)])
    try writer.close()
    try overwriteEntry(2, with: try jump(.undo, to: 9), in: directory.url)
    let log = try ActionLog(directory: directory.url)
    defer { try? log.close() }
    try log.append(try jump(.undo, to: 2))
    let second = try #require(try log.record(at: 2))
    let forward = try #require(try log.resolveJump(second))
    #expect(forward.isComplete == false)
    #expect(forward.state == 9)
    #expect(forward.summary == "state after 9 (no longer in the log)")
    let third = try #require(try log.record(at: 3))
    let viaForward = try #require(try log.resolveJump(third))
    #expect(viaForward.chain == [2, 9])
    #expect(viaForward.isComplete == false)
  }

  @Test func aJumpWhosePayloadIsNoTargetIsACodecError() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let writer = try ActionLog(directory: directory.url)
    try writer.append(try jump(.undo, to: 0))
    try writer.close()
    try overwriteEntry(
      1, with: NewEntry(kind: .undo, typeName: "undo", codec: .json, payload: Array(#"{"to":1}"#.utf8)),
      in: directory.url)
    let log = try ActionLog(directory: directory.url)
    defer { try? log.close() }
    let record = try #require(try log.record(at: 1))
    #expect(throws: LogError.self) { try log.resolveJump(record) }
  }
}
