import Chronicle
import ChronicleLog
import DemoLedger
import Foundation
import ChronicleTestTools
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A built tool's `serve` running as a child process on a free loopback port.
final class RunningServer {
  let child: ChildProcess
  /// `http://127.0.0.1:PORT`, as the server printed it.
  let url: String

  init(_ tool: String, _ log: URL, _ extra: [String] = []) throws {
    child = try ChildProcess(tool, ["serve", log.path, "--port", "0"] + extra, errors: .capture)
    let line = try #require(child.readLine(timeout: 60), "\(tool) serve printed nothing: \(child.errors?.text ?? "")")
    let prefix = "serving \(log.standardizedFileURL.path) at "
    #expect(line.hasPrefix(prefix), "\(line)")
    url = String(line.dropFirst(prefix.count)).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
  }

  /// Ends the server as Ctrl-C would and returns its exit status.
  func stop() -> Int32 {
    _ = kill(child.pid, SIGTERM)
    return child.wait(timeout: 20)
  }
}

/// `logtool serve` and `ledger-tool serve` as built: how they refuse to start, how they stop, and
/// the page in a real headless browser.
@Suite struct ServeCommandTests {
  /// Where the browser tests' screenshots go (docs/inspector.md shows them), only when
  /// `CHRONICLE_SCREENSHOTS=1` asks for them: other runs leave the tree as it was.
  static let screenshots: URL? =
    ProcessInfo.processInfo.environment["CHRONICLE_SCREENSHOTS"] == "1" ? Repository.file("docs/inspector") : nil

  static let browserAvailable: Bool =
    FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
    && (try? ChildProcess.run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import selenium"]))?
      .status == 0

  /// SIGTERM while a client holds the live stream open: the server ends the stream and exits 0
  /// within 2 s (it used to wait for the client forever).
  @Test func sigtermEndsAnOpenStream() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeInspectedLog(at: log, count: 10)
    let server = try RunningServer("logtool", log)
    let client = try ChildProcess(
      executable: URL(fileURLWithPath: "/usr/bin/env"),
      ["python3", "-c", "import sys, urllib.request\nfor line in urllib.request.urlopen(sys.argv[1]):\n  print(line.decode().strip(), flush=True)", server.url + "/api/stream"],
      errors: .discard)
    #expect(client.waitFor(timeout: 30) { $0.contains { $0.text.hasPrefix(": chronicle inspector stream") } })
    let started = Date()
    #expect(server.stop() == 0)
    #expect(Date().timeIntervalSince(started) < 2, "the server took \(Date().timeIntervalSince(started)) s to stop")
    _ = client.wait(timeout: 10)
  }

  /// The same with the page open in headless Chromium, whose live tail holds the stream: SIGTERM
  /// ends the server with exit 0 within 2 s, and the page notices.
  @Test(.enabled(if: browserAvailable, "needs chromium, chromium-driver and Python's selenium (tools/setup-tests)"))
  func sigtermEndsTheStreamOfAnOpenPage() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeInspectedLog(at: log, count: 10)
    let server = try RunningServer("logtool", log)
    let browser = try ChildProcess(
      executable: URL(fileURLWithPath: "/usr/bin/env"),
      ["python3", Repository.file("Tests/python/inspector_browser.py").path, "--hold", server.url], errors: .capture)
    var holding = false
    while let line = browser.readLine(timeout: 90) {
      if line.hasPrefix("holding:") {
        holding = true
        break
      }
    }
    #expect(holding, "the page's live stream did not open: \(browser.errors?.text ?? "")")
    let started = Date()
    #expect(server.stop() == 0)
    #expect(Date().timeIntervalSince(started) < 2, "the server took \(Date().timeIntervalSince(started)) s to stop")
    let result = browser.finish(timeout: 90)
    #expect(result.stdout.contains("ok: the page saw the server go"), "\(result.stdout) \(browser.errors?.text ?? "")")
  }

  @Test func badInputExitsTwoWithOneLine() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeInspectedLog(at: log, count: 10)
    let notALog = scratch.child("empty")
    try FileManager.default.createDirectory(at: notALog, withIntermediateDirectories: true)
    let garbage = scratch.child("garbage")
    try FileManager.default.createDirectory(at: garbage, withIntermediateDirectories: true)
    try Data(repeating: 0x5A, count: 64 * 1024).write(to: garbage.appendingPathComponent("data.mdb"))

    let cases: [(arguments: [String], message: String)] = [
      (["serve", scratch.child("missing").path], "logtool: no log at \(scratch.child("missing").path)"),
      (["serve", notALog.path], "logtool: \(notALog.path) is not a Chronicle log"),
      (["serve", garbage.path], "\(garbage.path)"),
      (["serve", log.path, "--host", "0.0.0.0"], "--host 0.0.0.0 is not a loopback address: give --token SECRET too"),
      (["serve", log.path, "--port", "70000"], "--port 70000 is not a port (0…65535)"),
      (["serve", log.path, "--token", "short"], "--token must have at least 8 characters"),
    ]
    for (arguments, message) in cases {
      let result = try ChildProcess.run("logtool", arguments, timeout: 30)
      #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(arguments) started serving: \(result.stdout)")
    }

    // A port already taken: exit 2 naming it.
    let first = try RunningServer("logtool", log)
    let port = try #require(first.url.split(separator: ":").last.map(String.init))
    let taken = try ChildProcess.run("logtool", ["serve", log.path, "--port", port], timeout: 30)
    #expect(taken.status == 2, "\(taken.stderr)")
    #expect(taken.stderr.contains("logtool: cannot serve on 127.0.0.1:\(port)"), "\(taken.stderr)")
    #expect(first.stop() == 0)

    // `serve` is one of logtool's commands, and bare `logtool` lists it.
    #expect(try ChildProcess.run("logtool", ["--help"]).stdout.contains("serve"))
    let bare = try ChildProcess.run("logtool", [])
    #expect(bare.status == 2 && bare.stderr.contains("serve"), "\(bare.stderr)")
  }

  /// With --token, the printed URL carries it and a request without it gets 401.
  @Test func theTokenIsInThePrintedURLAndRequired() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeInspectedLog(at: log, count: 10)
    let server = try RunningServer("logtool", log, ["--token", "s3cret-token"])
    #expect(server.url.hasSuffix("/?token=s3cret-token"), "\(server.url)")
    let base = String(server.url.prefix { $0 != "?" }).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    let (_, refused) = try await URLSession.shared.data(from: URL(string: base + "/api/info")!)
    #expect((refused as? HTTPURLResponse)?.statusCode == 401)
    let (_, served) = try await URLSession.shared.data(from: URL(string: base + "/api/info?token=s3cret-token")!)
    #expect((served as? HTTPURLResponse)?.statusCode == 200)
    #expect(server.stop() == 0)
  }

  /// A damaged log still opens: the verification panel names the damage, found by the tool's own
  /// `verify` in a child process, and the server goes on serving.
  @Test func aDamagedLogIsReportedNotFatal() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeInspectedLog(at: log, count: 200)
    let data = log.appendingPathComponent("data.mdb")
    var bytes = [UInt8](try Data(contentsOf: data))
    let needle = Array(#"{"n":"77","word":"hay"}"#.utf8)
    let at = try #require(bytes.indices.first { bytes[$0...].starts(with: needle) })
    bytes[at + needle.count - 3] = UInt8(ascii: "b")
    try Data(bytes).write(to: data)

    let server = try RunningServer("logtool", log)
    let (body, _) = try await URLSession.shared.data(from: URL(string: server.url + "/api/verify")!)
    let report = try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? [:]
    let chain = report["chain"] as? [String: Any] ?? [:]
    #expect(chain["valid"] as? Bool == false, "\(String(decoding: body, as: UTF8.self))")
    #expect(chain["firstBadSeq"] as? Int == 77)
    let (info, response) = try await URLSession.shared.data(from: URL(string: server.url + "/api/info")!)
    #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: info, as: UTF8.self))")
    #expect(server.stop() == 0)
  }

  @Test(.enabled(if: browserAvailable, "needs chromium, chromium-driver and Python's selenium (tools/setup-tests)"))
  func thePageInAHeadlessBrowser() throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let log = scratch.child("ledger")
    try makeLedgerLog(at: log)
    if let screenshots = Self.screenshots {
      try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
    }

    let server = try RunningServer("ledger-tool", log)
    let browser = try ChildProcess(
      executable: URL(fileURLWithPath: "/usr/bin/env"),
      ["python3", Repository.file("Tests/python/inspector_browser.py").path, server.url]
        + (Self.screenshots.map { [$0.path] } ?? []),
      errors: .capture)
    // The live step: this process writes through the ledger's store while the server (another
    // process) serves the page.
    while let line = browser.readLine(timeout: 150) {
      guard line == "live: waiting" else { continue }
      let store = try Store(initialState: Ledger.State(), reducer: Ledger(), log: .directory(log))
      try store.send(.deposit(account: "donald", cents: 500))
      try store.close()
      break
    }
    let result = browser.finish(timeout: 150)
    for step in ["24 entries", "no console error", "payload", "slider", "#seq=12", "shows the 20", "another process"] {
      #expect(result.stdout.contains(step), "no step '\(step)': \(result.stdout)")
    }
    #expect(server.stop() == 0)
  }
}
