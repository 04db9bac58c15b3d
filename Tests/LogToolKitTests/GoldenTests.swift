import Foundation
import ChronicleTestTools
import Testing

/// Runs the built `logtool` on a copy of `fixtures/v1-counter` and compares its standard
/// output and exit code with `Golden/NAME.txt`.
///
/// Machine-dependent text is normalized first: the temporary directory becomes `$TMP`,
/// file sizes and timings become placeholders. Run with `LOGTOOL_UPDATE_GOLDEN=1` to
/// rewrite the golden files after an intended change of output, and review the diff.
@Suite struct GoldenTests {
  /// Every read-only command, with and without `--json`, on the fixture.
  static let readOnlyCases: [(name: String, arguments: [String])] = [
    ("info", ["info", "$LOG"]),
    ("info-json", ["info", "$LOG", "--json"]),
    ("list-first", ["list", "$LOG", "--limit", "12"]),
    ("list-filtered", ["list", "$LOG", "--type", "set", "--type", "reset", "--from", "100", "--to", "200"]),
    (
      "list-kind-time",
      ["list", "$LOG", "--kind", "marker", "--since", "2026-01-01T00:02", "--until", "2026-01-01T00:06:00Z"]
    ),
    ("list-json", ["list", "$LOG", "--from", "55", "--to", "58", "--json"]),
    ("list-reverse", ["list", "$LOG", "--reverse", "--limit", "5"]),
    ("list-meta", ["list", "$LOG", "--meta", "user=bob", "--meta", "reason=batch #15"]),
    ("list-jsonl", ["list", "$LOG", "--from", "55", "--to", "57", "--jsonl"]),
    ("show-json-codec", ["show", "$LOG", "5"]),
    ("show-cbor-codec", ["show", "$LOG", "117"]),
    ("show-json", ["show", "$LOG", "57", "--json"]),
    ("tail", ["tail", "$LOG", "-n", "4"]),
    ("tail-json", ["tail", "$LOG", "-n", "2", "--json"]),
    ("verify", ["verify", "$LOG"]),
    ("verify-json", ["verify", "$LOG", "--json"]),
    ("stats", ["stats", "$LOG"]),
    ("stats-json", ["stats", "$LOG", "--json"]),
    ("snapshots", ["snapshots", "$LOG"]),
    ("snapshots-json", ["snapshots", "$LOG", "--json"]),
  ]

  @Test(arguments: readOnlyCases.map(\.name))
  func readOnlyCommand(_ name: String) throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    let arguments = Self.readOnlyCases.first { $0.name == name }!.arguments.map { $0 == "$LOG" ? log.path : $0 }
    let result = try Tool.run(arguments)
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stderr.isEmpty)
    try expectGolden(name, result.stdout, scratch: scratch)
  }

  @Test func exportImportAndCompact() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    let export = scratch.child("export.jsonl")

    let exported = try Tool.run(["export", log.path, "--output", export.path])
    #expect(exported.status == 0, "stderr: \(exported.stderr)")
    try expectGolden("export", exported.stdout, scratch: scratch)
    let lines = try String(contentsOf: export, encoding: .utf8).split(separator: "\n")
    try expectGolden("export-header", String(lines[0]) + "\n", scratch: scratch)
    try expectMatchesFixtureExpectations(lines.dropFirst())

    let imported = try Tool.run(["import", export.path, "--into", scratch.child("imported").path])
    #expect(imported.status == 0, "stderr: \(imported.stderr)")
    try expectGolden("import", imported.stdout, scratch: scratch)
    #expect(try RawDump(scratch.child("imported")) == RawDump(log), "the import is byte-identical to the fixture")

    let compacted = try Tool.run(
      ["compact", log.path, "--before", "250", "--archive", scratch.child("archive.jsonl").path])
    #expect(compacted.status == 0, "stderr: \(compacted.stderr)")
    try expectGolden("compact", compacted.stdout, scratch: scratch)
    let info = try Tool.run(["info", log.path])
    try expectGolden("info-compacted", info.stdout, scratch: scratch)
    #expect(try Tool.run(["verify", log.path]).status == 0)
  }

  @Test func exportToStandardOutputIsTheSameAsToAFile() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try Repository.copyFixture(to: log)
    let streamed = try Tool.run(["export", log.path, "-o", "-"])
    #expect(streamed.status == 0)
    #expect(try Tool.run(["export", log.path, "-o", scratch.child("file.jsonl").path]).status == 0)
    #expect(streamed.stdout == (try String(contentsOf: scratch.child("file.jsonl"), encoding: .utf8)))
  }

  @Test func helpExitsZeroAndUsageErrorsExitTwo() throws {
    let help = try Tool.run(["--help"])
    #expect(help.status == 0)
    for command in [
      "info", "list", "show", "tail", "verify", "stats", "snapshots", "export", "import", "compact", "keygen",
      "checkpoint", "prove", "consistency", "audit",
    ] {
      #expect(help.stdout.contains(command), "help lists \(command)")
      #expect(try Tool.run([command, "--help"]).status == 0)
    }
    let usageErrors: [[String]] = [
      [], ["frobnicate"], ["info"], ["show", "/nowhere"], ["show", "/nowhere", "abc"],
      ["list", "/x", "--kind", "bogus"],
      ["list", "/x", "--since", "yesterday"], ["compact", "/x", "--before", "5"],
      ["compact", "/x", "--before", "5", "--discard", "--archive", "/y"], ["export", "/x"], ["import", "/x"],
      ["keygen"], ["checkpoint", "/x"], ["prove", "/x"], ["prove", "/x", "1", "--checkpoint", "/c", "--size", "3"],
      ["consistency", "/x", "1"], ["verify", "/x", "--checkpoint", "/c"], ["verify", "/x", "--key", "/k"],
      ["audit", "/e", "--key", "/k"], ["audit", "/e", "--checkpoint", "/c"],
    ]
    for arguments in usageErrors {
      let result = try Tool.run(arguments)
      #expect(result.status == 2, "logtool \(arguments.joined(separator: " ")) exits 2, not \(result.status)")
      #expect(!result.stderr.isEmpty)
      #expect(result.stdout.isEmpty)
    }
  }

  /// Every entry line of the export carries what `expected.jsonl` says the fixture holds.
  private func expectMatchesFixtureExpectations(_ lines: ArraySlice<Substring>) throws {
    let expected = try Repository.fixtureExpectations().filter { $0["seq"] != nil }
    let entries = try lines.compactMap { line -> [String: Any]? in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      return object?["record"] as? String == "entry" ? object : nil
    }
    #expect(entries.count == expected.count)
    for (entry, expectation) in zip(entries, expected) {
      let payload = Data(base64Encoded: entry["payloadBase64"] as? String ?? "").map { [UInt8]($0) } ?? []
      let payloadHex = payload.map { String(format: "%02x", $0) }.joined()
      #expect(entry["seq"] as? Int == expectation["seq"] as? Int)
      #expect(entry["hash"] as? String == expectation["hashHex"] as? String)
      #expect(payloadHex == expectation["payloadHex"] as? String)
      #expect(entry["typeName"] as? String == expectation["typeName"] as? String)
      #expect(entry["kind"] as? String == expectation["kind"] as? String)
      #expect(entry["codec"] as? String == expectation["codec"] as? String)
      #expect(entry["flags"] as? Int == expectation["flags"] as? Int)
      #expect(entry["timestamp"] as? Int == expectation["timestamp"] as? Int)
      #expect(entry["metadata"] as? [String: String] == expectation["metadata"] as? [String: String])
    }
  }
}

/// Compares `actual` (normalized) with `Golden/NAME.txt`, or rewrites it with `LOGTOOL_UPDATE_GOLDEN=1`.
func expectGolden(
  _ name: String, _ actual: String, scratch: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation
) throws {
  let normalized = normalize(actual, scratch: scratch)
  let file = Repository.goldenDirectory.appendingPathComponent(name + ".txt")
  if ProcessInfo.processInfo.environment["LOGTOOL_UPDATE_GOLDEN"] != nil {
    try FileManager.default.createDirectory(at: Repository.goldenDirectory, withIntermediateDirectories: true)
    try normalized.write(to: file, atomically: true, encoding: .utf8)
    return
  }
  let expected = try? String(contentsOf: file, encoding: .utf8)
  #expect(expected != nil, "Golden/\(name).txt is missing", sourceLocation: sourceLocation)
  guard let expected, expected != normalized else { return }
  let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
  let actualLines = normalized.split(separator: "\n", omittingEmptySubsequences: false)
  let first =
    zip(expectedLines, actualLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    ?? min(expectedLines.count, actualLines.count)
  Issue.record(
    """
    output differs from Golden/\(name).txt at line \(first + 1):
      expected: \(first < expectedLines.count ? String(expectedLines[first]) : "<end>")
      actual:   \(first < actualLines.count ? String(actualLines[first]) : "<end>")
    """, sourceLocation: sourceLocation)
}

/// Replaces what differs between machines and runs: the scratch path, file sizes, timings.
func normalize(_ text: String, scratch: TemporaryDirectory) -> String {
  var text = text.replacingOccurrences(of: scratch.path, with: "$TMP")
  let rules: [(String, String)] = [
    (#"(?m)^(file size +).*$"#, "$1<size>"),
    (#"(?m)^(time +)\d+\.\d+ s \([\d,]+ entries/s\)$"#, "$1<elapsed>"),
    (#""(fileSize|bytesBefore|bytesAfter)":\d+"#, "\"$1\":0"),
    (#""seconds":[\d.e-]+"#, "\"seconds\":0"),
  ]
  for (pattern, template) in rules {
    let regex = try! NSRegularExpression(pattern: pattern)
    text = regex.stringByReplacingMatches(
      in: text, range: NSRange(text.startIndex..., in: text), withTemplate: template)
  }
  return text
}
