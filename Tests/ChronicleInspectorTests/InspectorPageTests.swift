import ChronicleInspector
import ChronicleTestTools
import Foundation
import Testing

/// The page's files (Sources/ChronicleInspector/Page/) as the server sends them, and the
/// inspector's own threads.
@Suite struct InspectorPageTests {
  /// Sources/ChronicleInspector/Page/, in this checkout.
  static let pageFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Sources/ChronicleInspector/Page")

  static func pageFile(_ name: String) throws -> String {
    try String(contentsOf: pageFolder.appendingPathComponent(name), encoding: .utf8)
  }

  /// The binary serves the files of Page/ byte for byte (they are compiled into it), each with
  /// its content type; the page changes only with a token, which its script and style carry.
  @Test func servesThePageFilesAsTheyAre() async throws {
    let files = [
      ("/", "index.html", "text/html; charset=utf-8"),
      ("/inspector.css", "inspector.css", "text/css; charset=utf-8"),
      ("/inspector.js", "inspector.js", "text/javascript; charset=utf-8"),
    ]
    try await servingInspectedLog(count: 3) { client in
      for (path, name, type) in files {
        let answer = try await client.get(path)
        #expect(answer.status == 200, "\(path)")
        #expect(answer.headers["content-type"] == type, "\(path)")
        #expect(answer.headers["cache-control"] == "no-cache", "\(path)")
        #expect(answer.text == (try Self.pageFile(name)), "\(path) is not Page/\(name)")
      }
    }
    try await servingInspectedLog(count: 3, token: "s3cret-token") { client in
      let page = try await client.get("/?token=s3cret-token")
      let expected = try Self.pageFile("index.html")
        .replacingOccurrences(of: #"href="/inspector.css""#, with: #"href="/inspector.css?token=s3cret-token""#)
        .replacingOccurrences(of: #"src="/inspector.js""#, with: #"src="/inspector.js?token=s3cret-token""#)
      #expect(expected != (try Self.pageFile("index.html")))
      #expect(page.text == expected)
      #expect(try await client.get("/inspector.js?token=s3cret-token").text == (try Self.pageFile("inspector.js")))
    }
  }

  /// The page's script parses (`node --check`), where Node.js is installed.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/node"), "needs Node.js (/usr/bin/node)"))
  func theScriptParses() throws {
    let script = Self.pageFolder.appendingPathComponent("inspector.js").path
    let result = try ChildProcess.run(executable: URL(fileURLWithPath: "/usr/bin/node"), ["--check", script])
    #expect(result.status == 0, "node --check \(script): \(result.stderr)")
  }

  /// `close()` stops the inspector's threads, after which the server it still runs answers with
  /// 503 and one line, rather than reading a closed log.
  @Test func afterCloseRequestsGet503() async throws {
    let scratch = try TemporaryDirectory(prefix: "inspector-tests")
    defer { scratch.remove() }
    let directory = scratch.child("log")
    try makeInspectedLog(at: directory, count: 5)
    let inspector = try Inspector(directory: directory)
    try await serving(inspector) { client in
      #expect(try await client.get("/api/entries").seqs == [1, 2, 3, 4, 5])
      inspector.close()
      let closed = try await client.get("/api/entries")
      #expect(closed.status == 503)
      #expect(closed.error == "the inspector is closed: open a new one to serve this log")
      // The page needs no thread of the pool: it is still served.
      #expect(try await client.get("/").status == 200)
    }
    inspector.close()  // a second close does nothing
  }
}
