import Chronicle
import ChronicleInspector
import ChronicleLog
import DemoLedger
import Foundation
import ChronicleTestTools
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// MARK: - Logs the tests serve

/// A log of `count` entries: types `increment`, `decrement`, `set` in turn, a marker every 97th,
/// metadata `user=uN` on every 5th, JSON and CBOR payloads, one minute apart from 2026-01-01, a
/// snapshot every 500, and entry 42's payload holding the word `needle`.
func makeInspectedLog(at directory: URL, count: Int) throws {
  let log = try ActionLog(directory: directory, options: .init(durability: .normal, flushInterval: nil, appID: "tests"))
  defer { try? log.close() }
  var seq = 0
  while seq < count {
    let batch = try (0..<min(1000, count - seq)).map { offset -> NewEntry in
      let n = seq + offset + 1
      let word = n == 42 ? "needle" : "hay"
      return NewEntry(
        kind: n % 97 == 0 ? .marker : .action, typeName: InspectedLog.type(n),
        metadata: n % 5 == 0 ? ["user": "u\(n % 7)"] : [:], codec: n % 2 == 0 ? .cbor : .json, schemaVersion: 1,
        payload: n % 2 == 0
          ? try PayloadCodec.cbor.encode(["n": String(n), "word": word])
          : Array(#"{"n":"\#(n)","word":"\#(word)"}"#.utf8),
        timestamp: InspectedLog.start + Int64(n) * 60_000_000)
    }
    let range = try log.append(contentsOf: batch)
    seq = Int(range.upperBound)
    for snapshot in stride(from: (Int(range.lowerBound) + 499) / 500 * 500, through: seq, by: 500) where snapshot > 0 {
      try log.writeSnapshot(
        at: UInt64(snapshot), state: Array("{\"count\":\(snapshot)}".utf8), codec: .json, schemaVersion: 1)
    }
  }
}

/// What ``makeInspectedLog(at:count:)`` writes.
enum InspectedLog {
  /// 2026-01-01T00:00:00Z in µs.
  static let start: Int64 = 1_767_225_600_000_000
  static func type(_ n: Int) -> String { ["increment", "decrement", "set"][n % 3] }
}

/// A ledger log through the demo's store: 2 opening actions, 20 transfers, an undo, a restore to 2.
func makeLedgerLog(at directory: URL) throws {
  let store = try Store(
    initialState: Ledger.State(), reducer: Ledger(), log: .directory(directory), options: StoreOptions(snapshotEvery: 10))
  try store.send(.deposit(account: "jenny", cents: 10_000))
  try store.send(.open(account: "donald"))
  for n in 0..<20 { try store.send(.transfer(from: "jenny", to: "donald", cents: n + 1)) }
  try store.undo()
  try store.restore(to: 2)
  try store.close()
}

// MARK: - Requests

/// A response's status, headers (names in lower case) and body, with its JSON.
struct Answer {
  var status: Int
  var headers: [String: String]
  var text: String
  var json: Any { (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) ?? NSNull() }
  var object: [String: Any] { json as? [String: Any] ?? [:] }
  var error: String { object["error"] as? String ?? "" }
  var entries: [[String: Any]] { object["entries"] as? [[String: Any]] ?? [] }
  var seqs: [Int] { entries.compactMap { $0["seq"] as? Int } }
}

/// Makes real HTTP requests to a server on loopback.
struct Client: Sendable {
  let base: String

  func get(_ uri: String, method: String = "GET", headers: [String: String] = [:]) async throws -> Answer {
    var request = URLRequest(url: try #require(URL(string: base + uri), "\(uri.prefix(80))"))
    request.httpMethod = method
    request.timeoutInterval = 60
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
      if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
    }
    return Answer(status: http.statusCode, headers: fields, text: String(decoding: data, as: UTF8.self))
  }
}

/// A log of `count` entries (``makeInspectedLog(at:count:)``) in a scratch directory, served as
/// ``serving(_:_:)`` does, with `token` when given.
func servingInspectedLog(count: Int, token: String? = nil, _ body: (Client) async throws -> Void) async throws {
  let scratch = try TemporaryDirectory(prefix: "inspector-tests")
  defer { scratch.remove() }
  let directory = scratch.child("log")
  try makeInspectedLog(at: directory, count: count)
  let inspector = try Inspector(directory: directory, token: token)
  defer { inspector.close() }
  try await serving(inspector, body)
}

/// Serves `inspector` in this process on a free loopback port and runs `body` with a client
/// that makes real HTTP requests to it; stops the server after.
func serving(_ inspector: Inspector, _ body: (Client) async throws -> Void) async throws {
  let (ports, announce) = AsyncStream<Int>.makeStream()
  let app = inspector.application(host: "127.0.0.1", port: 0) { port in announce.yield(port) }
  let server = Task { try await app.runService() }
  var iterator = ports.makeAsyncIterator()
  let port = try #require(await iterator.next())
  do {
    try await body(Client(base: "http://127.0.0.1:\(port)"))
  } catch {
    server.cancel()
    throw error
  }
  server.cancel()
  _ = await server.result
}

// MARK: - Tests

/// The JSON API against the server on a loopback port: real HTTP requests, real LMDB.
@Suite struct InspectorAPITests {
  @Test func infoPagesAndOneEntry() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 2500)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    let stored = try ActionLog(directory: directory, access: .readOnly)
    let hash42 = try #require(try stored.record(at: 42)).hash.map { String(format: "%02x", $0) }.joined()
    try stored.close()

    try await serving(inspector) { client in
      let info = try await client.get("/api/info")
      #expect(info.status == 200)
      #expect(info.object["first"] as? Int == 1)
      #expect(info.object["last"] as? Int == 2500)
      #expect(info.object["count"] as? Int == 2500)
      #expect(info.object["states"] as? Bool == false)

      let first = try await client.get("/api/entries?limit=100")
      #expect(first.seqs == Array(1...100))
      #expect(first.object["next"] as? Int == 101)
      #expect(first.entries[4]["metadata"] as? [String: String] == ["user": "u5"])
      #expect(first.entries[2]["typeName"] as? String == "increment")
      #expect(first.entries[0]["time"] as? String == "2026-01-01T00:01:00.000Z")

      let last = try await client.get("/api/entries?from=2450&limit=100")
      #expect(last.seqs == Array(2450...2500))
      #expect(last.object["next"] is NSNull)

      let newest = try await client.get("/api/entries?order=desc&limit=3")
      #expect(newest.seqs == [2500, 2499, 2498])
      #expect(newest.object["next"] as? Int == 2497)

      let snapshotRow = try await client.get("/api/entries?from=500&limit=1")
      #expect(snapshotRow.entries.first?["snapshot"] as? Bool == true)

      let entry = try await client.get("/api/entries/42")
      #expect(entry.status == 200)
      #expect(entry.object["hash"] as? String == hash42)
      #expect(entry.object["payload"] as? [String: String] == ["n": "42", "word": "needle"])
      #expect(entry.object["codec"] as? String == "cbor")

      let missing = try await client.get("/api/entries/9999")
      #expect(missing.status == 404)
      #expect(missing.error == "the log has no entry 9999 (it holds 1…2500)")

      let snapshots = try await client.get("/api/snapshots")
      #expect((snapshots.json as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [500, 1000, 1500, 2000, 2500])
    }
  }

  @Test func filtersByTypeKindMetadataTimeAndPayload() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 2500)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }

    try await serving(inspector) { client in
      let sets = try await client.get("/api/entries?type=set&limit=50")
      #expect(sets.seqs == Array((1...2500).filter { InspectedLog.type($0) == "set" }.prefix(50)))

      let markers = try await client.get("/api/entries?kind=marker&limit=1000")
      #expect(markers.seqs == Array(stride(from: 97, through: 2500, by: 97)))
      #expect(markers.object["next"] is NSNull)

      let user = try await client.get("/api/entries?meta=user%3Du3&type=decrement&limit=1000")
      let expected = (1...2500).filter { $0 % 5 == 0 && $0 % 7 == 3 && InspectedLog.type($0) == "decrement" }
      #expect(user.seqs == expected)

      // Entries 61…120 were written from 01:01 to 02:00.
      let hour = try await client.get("/api/entries?since=2026-01-01T01:01:00Z&until=2026-01-01T02:00:00Z&limit=1000")
      #expect(hour.seqs == Array(61...120))

      let needle = try await client.get("/api/entries?q=needle")
      #expect(needle.seqs == [42])

      // A filtered page answers with a cursor once it has read its budget.
      let none = try await client.get("/api/entries?type=nothing-has-this-type")
      #expect(none.seqs.isEmpty)
      #expect(none.object["next"] is NSNull)
      let newestSets = try await client.get("/api/entries?type=set&order=desc&limit=2")
      #expect(newestSets.seqs == [2498, 2495])
    }
  }

  /// Bad or huge parameters: 400 with a JSON message naming what was wrong; writes: 405; unknown paths: 404.
  @Test func badInputGetsAClearAnswer() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 300)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    let long = String(repeating: "x", count: 2000)
    let cases: [(uri: String, message: String)] = [
      ("/api/entries?limit=0", "'limit' must be a whole number from 1 to 1000, not '0'"),
      ("/api/entries?limit=100000", "'limit' must be a whole number from 1 to 1000, not '100000'"),
      ("/api/entries?limit=ten", "'limit' must be a whole number from 1 to 1000, not 'ten'"),
      ("/api/entries?from=-1", "'from' must be a sequence number (0…18446744073709551615), not '-1'"),
      ("/api/entries?from=99999999999999999999999", "'from' must be a sequence number"),
      ("/api/entries?kind=bogus", "unknown kind 'bogus': use action, restore, undo, redo or marker"),
      ("/api/entries?meta=novalue", "meta 'novalue' is not KEY=VALUE"),
      ("/api/entries?since=yesterday", "'since' is not an ISO 8601 time"),
      ("/api/entries?since=2026-02-01&until=2026-01-01", "'since' is after 'until'"),
      ("/api/entries?order=sideways", "'order' must be asc or desc"),
      ("/api/entries?limit=1&limit=2", "'limit' is given 2 times"),
      ("/api/entries?q=\(long)", "query parameter 'q' is too long"),
      ("/api/entries?" + (0..<70).map { "type=t\($0)" }.joined(separator: "&"), "too many query parameters"),
      ("/api/entries/abc", "'abc' is not a sequence number"),
      ("/api/diff?from=1", "'to' is missing"),
      ("/api/stats?buckets=0", "'buckets' must be a whole number from 1 to 1000"),
      ("/api/stream?max=0", "'max' must be a whole number"),
    ]
    try await serving(inspector) { client in
      for (uri, message) in cases {
        let answer = try await client.get(uri)
        #expect(answer.status == 400, "\(uri.prefix(80)): \(answer.status) \(answer.text.prefix(200))")
        #expect(answer.error.hasPrefix(message), "\(uri.prefix(80)): \(answer.error)")
      }
      let huge = try await client.get("/api/entries?" + String(repeating: "a", count: 20_000))
      #expect(huge.status == 400 && huge.error.contains("too long"), "\(huge.status) \(huge.error)")

      let post = try await client.get("/api/entries", method: "POST")
      #expect(post.status == 405)
      #expect(post.error == "the inspector is read-only: only GET is served")
      let delete = try await client.get("/api/entries/1", method: "DELETE")
      #expect(delete.status == 405)
      let head = try await client.get("/api/info", method: "HEAD")
      #expect(head.status == 405)

      let unknown = try await client.get("/api/nothing")
      #expect(unknown.status == 404)
      #expect(unknown.error == "no such page or endpoint: /api/nothing")

      let noStates = try await client.get("/api/state/3")
      #expect(noStates.status == 404)
      #expect(noStates.error.hasPrefix("this tool has no reducer"))

      // Still serving after all that.
      #expect(try await client.get("/api/info").status == 200)
    }
  }

  @Test func pageAndHeadersAreStrict() async throws {
    try await servingInspectedLog(count: 10) { client in
      for path in ["/", "/inspector.js", "/inspector.css", "/api/info", "/api/nothing"] {
        let answer = try await client.get(path)
        let policy = answer.headers["content-security-policy"] ?? ""
        #expect(policy.hasPrefix("default-src 'none'; script-src 'self'"), "\(path): \(policy)")
        #expect(answer.headers["x-content-type-options"] == "nosniff")
      }
      let page = try await client.get("/")
      #expect(page.headers["content-type"] == "text/html; charset=utf-8")
      #expect(page.text.contains("<script src=\"/inspector.js\" defer></script>"))
      // Nothing inline and nothing from elsewhere: the policy allows neither.
      #expect(!page.text.contains("<script>") && !page.text.contains("style=\"") && !page.text.contains("http"))
      let script = try await client.get("/inspector.js")
      #expect(!script.text.contains("innerHTML") && !script.text.contains("eval("))
    }
  }

  @Test func aTokenGuardsEveryRequest() async throws {
    try await servingInspectedLog(count: 10, token: "s3cret-token") { client in
      for path in ["/", "/api/info", "/api/entries/1", "/api/stream?max=1"] {
        let answer = try await client.get(path)
        #expect(answer.status == 401, "\(path)")
        #expect(answer.error.hasPrefix("this server needs its token"))
      }
      // The page's own script and style need it too: the page's tags carry it.
      #expect(try await client.get("/inspector.js").status == 401)
      #expect(try await client.get("/inspector.css").status == 401)
      #expect(try await client.get("/inspector.js?token=s3cret-token").status == 200)
      #expect(try await client.get("/inspector.css?token=s3cret-token").status == 200)
      let page = try await client.get("/?token=s3cret-token")
      #expect(page.text.contains(#"src="/inspector.js?token=s3cret-token""#))
      #expect(page.text.contains(#"href="/inspector.css?token=s3cret-token""#))
      #expect(try await client.get("/api/info?token=wrong-token!").status == 401)
      #expect(try await client.get("/api/info?token=s3cret-token").status == 200)
      #expect(try await client.get("/api/info", headers: ["Authorization": "Bearer s3cret-token"]).status == 200)
      #expect(try await client.get("/api/info", headers: ["Authorization": "Bearer s3cret-toke"]).status == 401)
    }
  }

  /// The page sends its filters as a form does (`URLSearchParams`: a space is `+`): the docs'
  /// example `reason=batch #15` finds its entry, `+` and `%20` alike, and `%2B` is a plus.
  @Test func aFilterWithASpaceMatches() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    let log = try ActionLog(directory: directory, options: .init(durability: .normal, flushInterval: nil))
    try log.append(NewEntry(typeName: "import", metadata: ["reason": "batch #15"], codec: .json, payload: Array("1".utf8)))
    try log.append(NewEntry(typeName: "import", metadata: ["reason": "a+b"], codec: .json, payload: Array("2".utf8)))
    try log.close()
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    try await serving(inspector) { client in
      let plus = try await client.get("/api/entries?meta=reason%3Dbatch+%2315")
      #expect(plus.seqs == [1], "\(plus.text)")
      let escaped = try await client.get("/api/entries?meta=reason%3Dbatch%20%2315")
      #expect(escaped.seqs == [1])
      let plusSign = try await client.get("/api/entries?meta=reason%3Da%2Bb")
      #expect(plusSign.seqs == [2])
    }
  }

  /// DNS rebinding: without a token, a request naming another host (a page of another site whose
  /// name now points here) gets nothing, whatever the route; loopback names are served.
  @Test func withoutATokenOnlyLoopbackNamesAreServed() async throws {
    try await servingInspectedLog(count: 10) { client in
      for path in ["/", "/api/info", "/api/entries", "/inspector.js"] {
        let answer = try await client.get(path, headers: ["Host": "evil.example"])
        #expect(answer.status == 403, "\(path)")
        #expect(answer.error.contains("loopback names only"), "\(answer.text)")
        #expect(!answer.text.contains("increment"))
      }
      for host in ["localhost:8420", "127.0.0.1", "[::1]:80", "127.1.2.3:9"] {
        #expect(try await client.get("/api/info", headers: ["Host": host]).status == 200, "\(host)")
      }
      #expect(try await client.get("/api/info", headers: ["Host": "127.0.0.1.evil.example"]).status == 403)
    }
  }

  @Test func statesAndDiffsWithTheAppsReducer() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("ledger")
    try makeLedgerLog(at: directory)
    let inspector = try Inspector(
      directory: directory, states: try InspectorStates.replaying(LedgerApp.self, directory: directory))
    defer { inspector.close() }
    try await serving(inspector) { client in
      #expect(try await client.get("/api/info").object["states"] as? Bool == true)
      let two = try await client.get("/api/state/2")
      #expect(two.status == 200)
      let balances = (two.object["state"] as? [String: Any])?["balances"] as? [String: Int]
      #expect(balances == ["jenny": 10_000, "donald": 0])

      let diff = try await client.get("/api/diff?from=2&to=3")
      let changes = diff.object["changes"] as? [[String: Any]] ?? []
      let paths = changes.compactMap { $0["path"] as? String }
      #expect(paths == ["/balances/donald", "/balances/jenny", "/transfers"], "\(diff.text)")
      #expect(changes.first?["before"] as? Int == 0 && changes.first?["after"] as? Int == 1)

      // The restore (entry 24) returns to the state after 2: no change from 2, everything from 23.
      let restore = try await client.get("/api/entries/24")
      #expect(restore.object["kind"] as? String == "restore")
      #expect((restore.object["jump"] as? [String: Any])?["state"] as? Int == 2)
      let same = try await client.get("/api/diff?from=2&to=24")
      #expect((same.object["changes"] as? [Any])?.isEmpty == true)

      let beyond = try await client.get("/api/state/25")
      #expect(beyond.status == 404)
      #expect(beyond.error == "the log has no entry 25 (it holds 1…24)")
    }
  }

  @Test func verificationShowsTheChainAndCheckpoints() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 300)
    let signer = try NoteSigner(name: "tests.example/log", seed: Array(repeating: 7, count: 32))
    let writer = try ActionLog(directory: directory)
    try writer.signCheckpoint(with: signer)
    try writer.close()

    let inspector = try Inspector(directory: directory, verifier: signer.verifier)
    try await serving(inspector) { client in
      let answer = try await client.get("/api/verify")
      let chain = answer.object["chain"] as? [String: Any] ?? [:]
      #expect(chain["valid"] as? Bool == true, "\(answer.text)")
      #expect(chain["entriesChecked"] as? Int == 300)
      let checkpoints = answer.object["checkpoints"] as? [[String: Any]] ?? []
      #expect(checkpoints.count == 1)
      #expect(checkpoints.first?["size"] as? Int == 300)
      #expect(checkpoints.first?["valid"] as? Bool == true)
      #expect(checkpoints.first?["signers"] as? [String] == ["tests.example/log"])
      #expect(answer.object["signaturesChecked"] as? Bool == true)
    }
    inspector.close()

    // Entry 41's payload rewritten in place in the file: the chain breaks there, and the
    // checkpoint's tree no longer holds.
    let data = directory.appendingPathComponent("data.mdb")
    var bytes = [UInt8](try Data(contentsOf: data))
    let needle = Array(#"{"n":"41","word":"hay"}"#.utf8)
    let at = try #require(bytes.indices.first { bytes[$0...].starts(with: needle) })
    bytes[at + needle.count - 3] = UInt8(ascii: "b")
    try Data(bytes).write(to: data)

    let damaged = try Inspector(directory: directory, verifier: signer.verifier)
    defer { damaged.close() }
    try await serving(damaged) { client in
      let answer = try await client.get("/api/verify")
      let chain = answer.object["chain"] as? [String: Any] ?? [:]
      #expect(chain["valid"] as? Bool == false, "\(answer.text)")
      #expect(chain["firstBadSeq"] as? Int == 41)
      let checkpoint = (answer.object["checkpoints"] as? [[String: Any]])?.first ?? [:]
      #expect(checkpoint["valid"] as? Bool == false, "\(answer.text)")
      // The entry itself is still served, as stored.
      let entry = try await client.get("/api/entries/41")
      #expect(entry.object["payload"] as? [String: String] == ["n": "41", "word": "hab"])
    }
  }

  @Test func statsCountTypesAndTime() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 300)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    try await serving(inspector) { client in
      let stats = try await client.get("/api/stats?buckets=5")
      #expect(stats.object["count"] as? Int == 300)
      let types = stats.object["types"] as? [[String: Any]] ?? []
      #expect(types.compactMap { $0["count"] as? Int } == [100, 100, 100])
      let timeline = stats.object["timeline"] as? [String: Any] ?? [:]
      let counts = timeline["counts"] as? [Int] ?? []
      #expect(counts.count == 5 && counts.reduce(0, +) == 300, "\(counts)")
      #expect((stats.object["kinds"] as? [String: Int]) == ["action": 297, "marker": 3])
    }
  }

  /// The event stream sends the entries another process writes while the client listens.
  @Test func theStreamSendsEntriesAnotherProcessWrites() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 20)
    let inspector = try Inspector(directory: directory)
    defer { inspector.close() }
    try await serving(inspector) { client in
      async let answer = client.get("/api/stream?after=20&max=3")
      try await Task.sleep(for: .milliseconds(500))
      let writer = try ChildProcess.run("chronicle-log-probe", ["append", directory.path, "5"])
      #expect(writer.status == 0, "\(writer.stderr)")
      let stream = try await answer
      #expect(stream.status == 200)
      #expect(stream.headers["content-type"] == "text/event-stream")
      let ids = stream.text.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { $0.dropFirst(4) }
      #expect(ids == ["21", "22", "23"], "\(stream.text)")
      #expect(stream.text.contains("event: entry\nid: 21\ndata: {\"seq\":21,"))
    }
  }
}
