import ChronicleInspector
import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// MARK: - Logs with something to mark

/// An encrypted log of `count` notes whose type names are sealed too (`sealsTypeNames`): without
/// the key, a reader knows of each entry only that it is encrypted and with which key.
func makeSealedLog(at directory: URL, count: Int) throws -> KeyRing {
  let ring = try KeyRing([EncryptionKey.random()], sealsTypeNames: true)
  let writer = try ActionLog(directory: directory, options: .init(keyRing: ring))
  for n in 1...count {
    try writer.append(try NewEntry(encoding: ["secret": "s3cret-\(n)"], typeName: "note", metadata: ["who": "jenny"], codec: .json))
  }
  try writer.close()
  return ring
}

/// Changes one byte of the payload `{"n":"SEQ","word":"hay"}` in the log file, in place: entry
/// SEQ no longer has the hash the chain stored for it.
func damageEntry(_ seq: Int, of directory: URL) throws {
  let data = directory.appendingPathComponent("data.mdb")
  var bytes = [UInt8](try Data(contentsOf: data))
  let needle = Array(#"{"n":"\#(seq)","word":"hay"}"#.utf8)
  let at = try #require(bytes.indices.first { bytes[$0...].starts(with: needle) })
  bytes[at + needle.count - 3] = UInt8(ascii: "b")
  try Data(bytes).write(to: data)
}

/// A log of `count` entries of type `tick`, one second apart, but for the sequence numbers in
/// `rare`, of type `rare`.
func makeLongLog(at directory: URL, count: Int, rare: Set<Int>) throws {
  let log = try ActionLog(directory: directory, options: .init(durability: .normal, flushInterval: nil))
  defer { try? log.close() }
  var seq = 0
  while seq < count {
    let batch = (0..<min(5000, count - seq)).map { offset -> NewEntry in
      let n = seq + offset + 1
      return NewEntry(
        typeName: rare.contains(n) ? "rare" : "tick", codec: .json, payload: Array("{\"n\":\(n)}".utf8),
        timestamp: InspectedLog.start + Int64(n) * 1_000_000)
    }
    seq = Int(try log.append(contentsOf: batch).upperBound)
  }
}

// MARK: - Tests

/// What the list marks: encrypted entries with their key id, and the entries the verification
/// names, through the API the page reads.
@Suite struct InspectorMarksTests {
  /// Without the key, every summary and every full entry says `encrypted` with the key id, and the
  /// statistics count the entries whose type name is sealed as encrypted, per key, not as a type
  /// with no name.
  @Test func encryptedEntriesCarryTheirKeyID() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-marks")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    let ring = try makeSealedLog(at: directory, count: 3)
    let keyID = ring.current.idText
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    try await serving(inspector) { client in
      let page = try await client.get("/api/entries?limit=10")
      #expect(page.seqs == [1, 2, 3], "\(page.text)")
      for summary in page.entries {
        #expect(summary["encrypted"] as? Bool == true, "\(summary)")
        #expect(summary["keyID"] as? String == keyID, "\(summary)")
      }
      let one = try await client.get("/api/entries/2")
      #expect(one.object["keyID"] as? String == keyID, "\(one.text)")

      let stats = try await client.get("/api/stats")
      let types = stats.object["types"] as? [[String: Any]] ?? []
      #expect(types.count == 1, "\(stats.text)")
      #expect(types.first?["encrypted"] as? Bool == true, "\(stats.text)")
      #expect(types.first?["keyID"] as? String == keyID, "\(stats.text)")
      #expect(types.first?["count"] as? Int == 3, "\(stats.text)")
      #expect(types.first?["type"] == nil, "an encrypted entry has no type name to count: \(stats.text)")
    }

    // With the key, nothing is encrypted to a reader: the entries count under their type.
    let clear = try Inspector(directory: directory, keyRing: ring)
    defer { clear.close() }
    try await serving(clear) { client in
      let page = try await client.get("/api/entries?limit=10")
      #expect(page.entries.allSatisfy { $0["encrypted"] == nil && $0["keyID"] == nil }, "\(page.text)")
      let stats = try await client.get("/api/stats")
      let types = stats.object["types"] as? [[String: Any]] ?? []
      #expect(types.map { $0["type"] as? String } == ["note"], "\(stats.text)")
    }
  }

  /// The verification answer lists the entries its problems name, with their problems, so the page
  /// can mark them; a sound log flags none.
  @Test func verificationFlagsTheEntriesItNames() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-marks")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 120)

    let sound = try Inspector(directory: directory)
    try await serving(sound) { client in
      let answer = try await client.get("/api/verify")
      #expect(answer.object["flagged"] as? [Any] != nil, "\(answer.text)")
      #expect((answer.object["flagged"] as? [Any])?.isEmpty == true, "\(answer.text)")
    }
    sound.close()

    try damageEntry(41, of: directory)
    let damaged = try Inspector(
      directory: directory, verifyCommand: [Helpers.url("logtool").path, "verify", "--json", directory.path])
    defer { damaged.close() }
    try await serving(damaged) { client in
      let answer = try await client.get("/api/verify")
      let flagged = answer.object["flagged"] as? [[String: Any]] ?? []
      #expect(flagged.compactMap { $0["seq"] as? Int } == [41], "\(answer.text)")
      let problems = flagged.first?["problems"] as? [String] ?? []
      #expect(problems.contains { $0.hasPrefix("hash mismatch") }, "\(answer.text)")
    }
  }
}

// MARK: - In the browser

/// The list in headless Chromium: a log too long for the browser's element heights scrolls to its
/// last entry and follows the newest, a sparse filter searches on by itself, and the list marks
/// encrypted entries and the entries the verification names.
@Suite(.serialized, .enabled(if: ServeCommandTests.browserAvailable, "needs chromium, chromium-driver and Python's selenium (tools/setup-tests)"))
struct InspectorListBrowserTests {
  /// Runs the browser script with `arguments`; when it prints `live: waiting`, runs `write` (this
  /// process appends while the server, another process, serves the page). Returns its output.
  func browse(_ arguments: [String], write: () throws -> Void = {}) throws -> ChildResult {
    let browser = try ChildProcess(
      executable: URL(fileURLWithPath: "/usr/bin/env"),
      ["python3", Repository.file("Tests/python/inspector_browser.py").path] + arguments, errors: .capture)
    while let line = browser.readLine(timeout: 300) {
      guard line == "live: waiting" else { continue }
      try write()
      break
    }
    return browser.finish(timeout: 300)
  }

  /// Expects the script to have passed every step, and one of them to be each of `steps`.
  func expectPassed(_ result: ChildResult, _ steps: [String]) {
    #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    let passed = result.stdout.split(separator: "\n").filter { $0.hasPrefix("ok: ") }
    for step in steps {
      #expect(passed.contains { $0.contains(step) }, "no step '\(step)': \(result.stdout) \(result.stderr)")
    }
  }

  /// Appends one entry to the log in `directory`, as an app would.
  func appendOne(to directory: URL) throws {
    let writer = try ActionLog(directory: directory, options: .init(durability: .normal, flushInterval: nil))
    try writer.append(NewEntry(typeName: "tick", codec: .json, payload: Array("{\"n\":\"new\"}".utf8)))
    try writer.close()
  }

  @Test func aLongLogScrollsToItsEndAndSearchesSparseFilters() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-large")
    defer { scratch.remove() }
    let log = scratch.child("log")
    let count = 1_000_000
    let rare = [150_001, 999_990]
    try makeLongLog(at: log, count: count, rare: Set(rare))

    let server = try RunningServer("logtool", log)
    let result = try browse(["--large", server.url, rare.map(String.init).joined(separator: ",")]) {
      try appendOne(to: log)
    }
    expectPassed(result, ["scrolled to the end", "a sparse filter finds", "stops the search", "following the newest"])
    #expect(server.stop() == 0)
  }

  @Test func followingTheNewestShowsItWhole() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-follow")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeInspectedLog(at: log, count: 2000)
    let server = try RunningServer("logtool", log)
    let result = try browse(["--follow", server.url]) { try appendOne(to: log) }
    expectPassed(result, ["following the newest"])
    #expect(server.stop() == 0)
  }

  @Test func encryptedAndFlaggedEntriesAreMarked() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-marks")
    defer { scratch.remove() }
    let sealed = scratch.child("sealed")
    let ring = try makeSealedLog(at: sealed, count: 3)
    let damaged = scratch.child("damaged")
    try makeInspectedLog(at: damaged, count: 200)
    try damageEntry(77, of: damaged)
    let first = try RunningServer("logtool", sealed)
    let second = try RunningServer("logtool", damaged)
    let result = try browse(["--marks", first.url, ring.current.idText, second.url, "77"])
    expectPassed(result, ["the encrypted entries are marked", "named by the verification"])
    #expect(first.stop() == 0)
    #expect(second.stop() == 0)
  }
}
