import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

/// `list` and `show` as an auditor reads them: jumps in terms of the original actions,
/// flags, metadata filters, newest first, JSON Lines, nested type names, `--version`.
@Suite struct AuditDisplayTests {
  /// 1 open (user=jenny), 2 deposit, 3 todos.add (from an effect, not undoable), 4 undo → 2,
  /// 5 undo → 4 (the state after 2), 6 redo → 3, 7 restore → 0, 8 todos.edit (user=jenny).
  static func makeAuditLog(at directory: URL) throws {
    let log = try ActionLog(directory: directory, options: .init(durability: .normal, flushInterval: nil))
    defer { try? log.close() }
    func jump(_ kind: EntryKind, _ target: UInt64) throws -> NewEntry {
      try NewEntry(
        kind: kind, encoding: ["target": target], typeName: kind.description, codec: .cbor,
        timestamp: 1_767_225_600_000_000)
    }
    func action(_ name: String, flags: EntryFlags = [], metadata: [String: String] = [:]) throws -> NewEntry {
      try NewEntry(
        flags: flags, encoding: [name: [String: Int]()], typeName: name, metadata: metadata, codec: .json,
        timestamp: 1_767_225_600_000_000)
    }
    try log.append(contentsOf: [
      try action("open", metadata: ["user": "jenny", "reason": "new account"]), try action("deposit"),
      try action("todos.add", flags: [.fromEffect, .notUndoable], metadata: ["user": "bob"]),
      try jump(.undo, 2), try jump(.undo, 4), try jump(.redo, 3), try jump(.restore, 0),
      try action("todos.edit", flags: [.continuesGroup], metadata: ["user": "jenny"]),
    ])
  }

  private func withAuditLog(_ body: (String) throws -> Void) throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Self.makeAuditLog(at: log)
    try body(log.path)
  }

  @Test func listShowsJumpsAsTheStatesTheyReturnTo() throws {
    try withAuditLog { log in
      let result = try Tool.run(["list", log])
      #expect(result.status == 0, "\(result.stderr)")
      let lines = result.stdout.split(separator: "\n").map(String.init)
      #expect(lines.count == 9)
      #expect(lines[0].hasPrefix("SEQ  TIME") && lines[0].contains("KIND     FLAGS  TYPE"))
      #expect(lines[3].contains("action   EU     todos.add"), "\(lines[3])")
      #expect(lines[4].contains("undo     -      → state after 2 (deposit)"), "\(lines[4])")
      // An undo to the state an undo made: the original action, not entry 4.
      #expect(lines[5].contains("undo     -      → state after 2 (deposit)"), "\(lines[5])")
      #expect(lines[6].contains("redo     -      → state after 3 (todos.add)"), "\(lines[6])")
      #expect(lines[7].contains("restore  -      → initial state"), "\(lines[7])")
      #expect(lines[8].contains("action   G      todos.edit"), "\(lines[8])")
    }
  }

  @Test func showFollowsTheChainOfJumps() throws {
    try withAuditLog { log in
      let text = try Tool.run(["show", log, "5"])
      #expect(text.status == 0)
      #expect(text.stdout.contains("target      4 → 2\n"), "\(text.stdout)")
      #expect(text.stdout.contains("returns to  state after 2 (deposit)\n"), "\(text.stdout)")
      let json = try Tool.run(["show", log, "5", "--json"])
      let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
      let jump = try #require(object["jump"] as? [String: Any])
      #expect(jump["target"] as? Int == 4)
      #expect(jump["state"] as? Int == 2)
      #expect(jump["stateType"] as? String == "deposit")
      #expect(jump["chain"] as? [Int] == [4, 2])
      #expect(jump["complete"] as? Bool == true)
      let action = try Tool.run(["show", log, "2", "--json"])
      #expect(!action.stdout.contains("\"jump\""))
    }
  }

  @Test func listFiltersOnMetadataAndNestedTypes() throws {
    try withAuditLog { log in
      let jenny = try Tool.run(["list", log, "--meta", "user=jenny"])
      #expect(jenny.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ")[0] } == ["1", "8"])
      let both = try Tool.run(["list", log, "--meta", "user=jenny", "--meta", "reason=new account"])
      #expect(both.stdout.split(separator: "\n").count == 2)
      let nobody = try Tool.run(["list", log, "--meta", "user="])
      #expect(nobody.stdout.split(separator: "\n").count == 1)
      let todos = try Tool.run(["list", log, "--type", "todos"])
      #expect(todos.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ")[0] } == ["3", "8"])
      let exact = try Tool.run(["list", log, "--type", "todos.add"])
      #expect(exact.stdout.split(separator: "\n").count == 2)
      let bad = try Tool.run(["list", log, "--meta", "user"])
      #expect(bad.status == 2)
      #expect(bad.stderr.contains("--meta 'user' is not KEY=VALUE"), "\(bad.stderr)")
    }
  }

  @Test func listReversesAndStreamsJSONLines() throws {
    try withAuditLog { log in
      let newest = try Tool.run(["list", log, "--reverse", "--limit", "3"])
      #expect(newest.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ")[0] } == ["8", "7", "6"])
      let lines = try Tool.run(["list", log, "--jsonl", "--reverse", "--from", "4"])
      #expect(lines.status == 0)
      let objects = try lines.stdout.split(separator: "\n").map {
        try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
      }
      #expect(objects.map { $0["seq"] as? Int } == [8, 7, 6, 5, 4])
      #expect((objects[2]["jump"] as? [String: Any])?["state"] as? Int == 3)
      let array = try Tool.run(["list", log, "--json", "--reverse", "--limit", "2"])
      let parsed = try #require(try JSONSerialization.jsonObject(with: Data(array.stdout.utf8)) as? [[String: Any]])
      #expect(parsed.map { $0["seq"] as? Int } == [8, 7])
      #expect(try Tool.run(["list", log, "--json", "--jsonl"]).status == 2)
    }
  }

  @Test func versionPrintsTheToolAndFormatVersions() throws {
    let result = try Tool.run(["--version"])
    #expect(result.status == 0)
    #expect(result.stdout == "0.1.0 (log formats 1–2)\n")
  }
}
