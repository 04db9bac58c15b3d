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

// MARK: - A store to inspect

/// A number the app keeps positive once it has one.
struct Positive: Reducer {
  struct State: Codable, Sendable, Equatable { var value = 0 }
  enum Action: Codable, Sendable { case set(Int) }
  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    if case .set(let value) = action { state.value = value }
    return .none
  }
}

// MARK: - Tests

/// The inspector served from a live store in the app's own process: read-only by default; with
/// controls, buttons that go through the store, guarded by the token and the origin.
@Suite struct InAppInspectorTests {
  func makeStore(_ directory: URL) throws -> Store<Positive.State, Positive.Action> {
    try Store(
      initialState: Positive.State(), reducer: Positive(), log: .directory(directory),
      validators: [Validator("the value stays positive") { $0.value > 0 }])
  }

  @Test func readOnlyByDefaultAndLive() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-in-app")
    defer { scratch.remove() }
    let store = try makeStore(scratch.child("log"))
    defer { try? store.close() }
    for value in 1...5 { try await store.send(.set(value)) }
    let inspector = try Inspector(store: store)
    defer { inspector.close() }
    #expect(inspector.token == nil)
    try await serving(inspector) { client in
      let info = try await client.get("/api/info")
      #expect(info.object["controls"] as? [String] == [], "\(info.text)")
      #expect(info.object["states"] as? Bool == true)
      // An entry the store appends shows at once, with the live state.
      try await store.send(.set(42))
      let last = try await client.get("/api/entries?order=desc&limit=1")
      #expect(last.seqs == [6], "\(last.text)")
      let state = try await client.get("/api/state/6")
      #expect(state.object["state"] as? [String: Int] == ["value": 42], "\(state.text)")
      for path in ["/api/undo", "/api/redo", "/api/restore/2"] {
        let refused = try await client.get(path, method: "POST")
        #expect(refused.status == 405, "\(path): \(refused.status) \(refused.text)")
      }
    }
    #expect(store.lastSeq == 6)
  }

  @Test func buttonsGoThroughTheStore() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-in-app")
    defer { scratch.remove() }
    let store = try makeStore(scratch.child("log"))
    defer { try? store.close() }
    for value in 1...5 { try await store.send(.set(value)) }
    let inspector = try Inspector(store: store, controls: .all)
    defer { inspector.close() }
    let token = try #require(inspector.token, "controls make a token")
    #expect(token.count == 32)
    try await serving(inspector) { client in
      let bearer = ["Authorization": "Bearer \(token)"]
      #expect(try await client.get("/api/info").status == 401)
      let info = try await client.get("/api/info?token=\(token)")
      #expect(info.object["controls"] as? [String] == ["undo", "redo", "restore"], "\(info.text)")
      #expect(info.object["canUndo"] as? Bool == true)
      #expect(info.object["canRedo"] as? Bool == false)

      // Refused, and nothing written: no token, the token in the query only, another origin, a
      // cross-site fetch.
      let refusals: [(String, [String: String], Int)] = [
        ("/api/undo", [:], 401),
        ("/api/undo?token=\(token)", [:], 401),
        ("/api/undo", bearer.merging(["Origin": "http://evil.example"]) { $1 }, 403),
        ("/api/undo", bearer.merging(["Sec-Fetch-Site": "cross-site"]) { $1 }, 403),
        ("/api/entries", bearer, 405),
      ]
      for (path, headers, status) in refusals {
        let answer = try await client.get(path, method: "POST", headers: headers)
        #expect(answer.status == status, "\(path) \(headers): \(answer.status) \(answer.text)")
        #expect(!answer.error.isEmpty)
      }
      #expect(store.lastSeq == 5)

      // Undo from the page's own origin: an undo entry that names the inspector.
      let origin = ["Origin": client.base, "Sec-Fetch-Site": "same-origin"]
      let undone = try await client.get("/api/undo", method: "POST", headers: bearer.merging(origin) { $1 })
      #expect(undone.status == 200, "\(undone.text)")
      #expect(undone.object["seq"] as? Int == 6)
      #expect(store.state == Positive.State(value: 4))
      let entry = try await client.get("/api/entries/6?token=\(token)")
      #expect(entry.object["kind"] as? String == "undo", "\(entry.text)")
      #expect((entry.object["metadata"] as? [String: String])?["who"] == "inspector")

      let redone = try await client.get("/api/redo", method: "POST", headers: bearer)
      #expect(redone.object["seq"] as? Int == 7, "\(redone.text)")
      #expect(store.state == Positive.State(value: 5))
      #expect(try await client.get("/api/redo", method: "POST", headers: bearer).status == 409)

      let restored = try await client.get("/api/restore/2", method: "POST", headers: bearer)
      #expect(restored.object["seq"] as? Int == 8, "\(restored.text)")
      #expect(store.state == Positive.State(value: 2))
      let missing = try await client.get("/api/restore/99", method: "POST", headers: bearer)
      #expect(missing.status == 404, "\(missing.text)")

      // The store's validator refuses the initial state (0): no entry, the reason in the answer.
      let refused = try await client.get("/api/restore/0", method: "POST", headers: bearer)
      #expect(refused.status == 409, "\(refused.text)")
      #expect(refused.error.contains("the value stays positive"), "\(refused.text)")
      #expect(store.lastSeq == 8)
      #expect(store.state == Positive.State(value: 2))
    }
  }

  @Test func offLoopbackNeedsAToken() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-in-app")
    defer { scratch.remove() }
    let store = try makeStore(scratch.child("log"))
    defer { try? store.close() }
    await #expect(throws: ChronicleError.self) {
      try await Inspector.serve(store, host: "0.0.0.0", port: 0)
    }
    #expect(throws: ChronicleError.self) { try Inspector(store: store, token: "short") }
  }

  /// The buttons in a real browser: Undo, then Restore on entry 2, on a ledger store served
  /// from this process.
  @Test(.enabled(if: ServeCommandTests.browserAvailable, "needs chromium, chromium-driver and Python's selenium"))
  func theButtonsInAHeadlessBrowser() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-in-app")
    defer { scratch.remove() }
    let store = try Store(
      initialState: Ledger.State(), reducer: Ledger(), log: .directory(scratch.child("ledger")),
      options: StoreOptions(snapshotEvery: 10))
    defer { try? store.close() }
    try await store.send(.deposit(account: "jenny", cents: 10_000))
    try await store.send(.open(account: "donald"))
    for n in 0..<5 { try await store.send(.transfer(from: "jenny", to: "donald", cents: n + 1)) }
    let expected = try store.state(at: 2)

    let (urls, announce) = AsyncStream<String>.makeStream()
    let server = Task { try await Inspector.serve(store, port: 0, controls: .all) { announce.yield($0) } }
    defer { server.cancel() }
    var iterator = urls.makeAsyncIterator()
    let url = try #require(await iterator.next())
    let shots = ServeCommandTests.screenshots.map { [$0.path] } ?? []
    let result = try await offloadBlocking {
      try ChildProcess.run(
        executable: URL(fileURLWithPath: "/usr/bin/env"),
        ["python3", Repository.file("Tests/python/inspector_browser.py").path, "--in-app", url] + shots)
    }
    #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    for step in ["Undo made entry 8", "Restore to entry 2 made entry 9"] {
      #expect(result.stdout.contains(step), "no step '\(step)': \(result.stdout)")
    }
    #expect(store.lastSeq == 9)
    #expect(store.state == expected)
  }
}

/// Runs blocking work (a child process) off Swift's cooperative threads, so the server in this
/// process keeps answering.
func offloadBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
  }
}
