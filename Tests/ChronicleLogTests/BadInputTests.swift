import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

@testable import ChronicleLog

/// Every file below `path` with its size and contents' hash: to prove that a failed open changed nothing.
/// `lock.mdb` is LMDB's reader table, rewritten by every open (read-only ones too): only its presence counts.
private func fingerprint(_ path: String) -> [String: String] {
  var result: [String: String] = [:]
  let fileManager = FileManager.default
  result["."] = fileManager.fileExists(atPath: path) ? "exists" : "absent"
  for name in (try? fileManager.subpathsOfDirectory(atPath: path)) ?? [] {
    guard name != "lock.mdb" else {
      result[name] = "present"
      continue
    }
    let contents = fileManager.contents(atPath: path + "/" + name) ?? Data()
    result[name] = "\(contents.count) bytes, hash \(contents.hashValue)"
  }
  return result
}

private func expectOpenFails(
  _ url: URL, access: ActionLog.Access, options: ActionLog.Options = .init(), mentioning needle: String,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  let before = fingerprint(url.path)
  let error = #expect(throws: LogError.self, sourceLocation: sourceLocation) {
    try ActionLog(directory: url, access: access, options: options)
  }
  let message = error.map { "\($0)" } ?? ""
  #expect(message.contains(url.path), "the error names the path: \(message)", sourceLocation: sourceLocation)
  #expect(message.contains(needle), "the error says why: \(message)", sourceLocation: sourceLocation)
  #expect(fingerprint(url.path) == before, "nothing was created or changed", sourceLocation: sourceLocation)
}

@Suite struct BadInputTests {
  @Test func aPathThatDoesNotExist() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    expectOpenFails(dir.child("missing"), access: .readOnly, mentioning: "does not exist")
    expectOpenFails(
      dir.child("missing"), access: .readWrite, options: .init(createIfMissing: false), mentioning: "does not exist")
  }

  @Test func aFileInsteadOfADirectory() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let file = dir.child("file")
    try Data("hello".utf8).write(to: file)
    expectOpenFails(file, access: .readOnly, mentioning: "not a directory")
    expectOpenFails(file, access: .readWrite, mentioning: "not a directory")
  }

  @Test func aDirectoryOfSomethingElse() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try Data("notes".utf8).write(to: dir.child("notes.txt"))
    expectOpenFails(dir.url, access: .readOnly, mentioning: "holds no data.mdb")
    expectOpenFails(dir.url, access: .readWrite, mentioning: "notes.txt")
  }

  @Test func garbageEmptyTruncatedAndZeroFilledDataFiles() throws {
    let cases: [(String, Data, String)] = [
      ("garbage", Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }), "not an LMDB file"),
      ("empty", Data(), "is empty"),
      ("truncated", Data([1, 2, 3, 4, 5]), "truncated"),
      ("zeros", Data(count: 1 << 16), "not an LMDB file"),
    ]
    for (name, contents, needle) in cases {
      let dir = try TemporaryDirectory()
      defer { dir.remove() }
      try contents.write(to: dir.child("data.mdb"))
      expectOpenFails(dir.url, access: .readOnly, mentioning: needle)
      expectOpenFails(dir.url, access: .readWrite, mentioning: needle)
      _ = name
    }
  }

  @Test func aTruncatedRealLogIsRefused() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    try log.append(contentsOf: (0..<2000).map { try NewEntry(encoding: $0, typeName: "n", codec: .cbor) })
    try log.close()
    let data = try Data(contentsOf: dir.child("data.mdb"))
    try data.prefix(4096 * 3).write(to: dir.child("data.mdb"))
    let error = #expect(throws: LogError.self) {
      let reopened = try ActionLog(directory: dir.url, access: .readOnly)
      _ = try reopened.verify()
    }
    #expect(error.map { "\($0)" }?.contains(dir.path) == true)
  }

  @Test func anLMDBEnvironmentThatIsNotAChronicleLog() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "other", create: true)
    try env.write { try $0.put([1], forKey: [1], in: db) }
    env.close()
    expectOpenFails(dir.url, access: .readOnly, mentioning: "no Chronicle databases")
    expectOpenFails(dir.url, access: .readWrite, mentioning: "no Chronicle databases")
  }

  @Test func aNewerFormatIsRefused() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try ActionLog(directory: dir.url).close()
    let env = try Environment(path: dir.path, configuration: .init(maxDatabases: 4))
    let meta = try env.openDatabase(named: "meta")
    try env.write { try $0.put([0, 0, 0, 3], forKey: Array("format".utf8), in: meta) }
    env.close()
    expectOpenFails(dir.url, access: .readOnly, mentioning: "format 3; this version reads format 2")
    expectOpenFails(dir.url, access: .readWrite, mentioning: "format 3")
  }

  @Test func anotherAppsLogIsRefused() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try ActionLog(directory: dir.url, options: .init(appID: "ledger")).close()
    expectOpenFails(dir.url, access: .readWrite, options: .init(appID: "notes"), mentioning: "belongs to app 'ledger'")
    try ActionLog(directory: dir.url, options: .init(appID: "ledger")).close()
    try ActionLog(directory: dir.url).close()  // no app id: any log will do
  }

  @Test func aMissingLockFileIsFine() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let log = try ActionLog(directory: dir.url)
    try log.append(try NewEntry(encoding: 1, typeName: "n", codec: .json))
    try log.close()
    try FileManager.default.removeItem(at: dir.child("lock.mdb"))
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    #expect(try reader.count() == 1)
    // A reader never runs without LMDB's reader table: a writer starting meanwhile must see it.
    #expect(FileManager.default.fileExists(atPath: dir.child("lock.mdb").path), "the reader recreates lock.mdb")
    try reader.close()
    let writer = try ActionLog(directory: dir.url)
    #expect(try writer.append(try NewEntry(encoding: 2, typeName: "n", codec: .json)) == 2)
    try writer.close()
  }

  @Test func readOnlyRefusesWrites() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    try ActionLog(directory: dir.url).close()
    let reader = try ActionLog(directory: dir.url, access: .readOnly)
    #expect(throws: LogError.self) { try reader.append(try NewEntry(encoding: 1, typeName: "n", codec: .json)) }
    #expect(throws: LogError.self) { try reader.writeSnapshot(at: 0, state: [], codec: .json, schemaVersion: 1) }
  }

  @Test(.enabled(if: geteuid() == 0, "needs root to run a probe as another user"))
  func aDirectoryWithoutPermissionAsAnotherUser() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try ActionLog(directory: logURL).close()
    // Let "nobody" reach the parent, but not the log directory (0700, owned by root).
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
    let before = fingerprint(logURL.path)
    for access in ["read", "write"] {
      let probe = try ChildProcess("chronicle-log-probe", ["try-open-as-nobody", logURL.path, access])
      let line = probe.readLine() ?? ""
      #expect(probe.wait() == 3)
      #expect(line.contains("permission denied"), "\(line)")
      #expect(line.contains(logURL.path), "\(line)")
    }
    #expect(fingerprint(logURL.path) == before)
  }

  /// A read-only instance in this process keeps the writer out: the error says so, not
  /// something that reads like a file permission.
  @Test func aReadOnlyInstanceInThisProcessBlocksTheWriterAndSaysSo() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    try ActionLog(directory: logURL).close()
    let reader = try ActionLog(directory: logURL, access: .readOnly)
    let error = #expect(throws: LogError.self) { try ActionLog(directory: logURL) }
    guard case .openReadOnlyInThisProcess(let path)? = error else {
      Issue.record("expected openReadOnlyInThisProcess, got \(String(describing: error))")
      return
    }
    #expect(path == logURL.standardizedFileURL.resolvingSymlinksInPath().path || path == logURL.path)
    #expect("\(error!)".contains("open read-only elsewhere in this process"))
    try reader.close()
    try ActionLog(directory: logURL).close()
  }

  /// A meta anchor of the largest sequence number leaves no room for an entry: the log is
  /// refused as corrupt meta, by every reader and by verify, instead of crashing them.
  @Test func anAnchorOfTheLargestSequenceNumberIsCorruptMeta() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let logURL = dir.child("log")
    let log = try ActionLog(directory: logURL)
    try log.append(NewEntry(typeName: "one", codec: .json, payload: Array("1".utf8)))
    try log.close()
    let environment = try Environment(path: logURL.path, configuration: .init(mapSize: 1 << 24, maxDatabases: 4))
    let meta = try environment.openDatabase(named: "meta")
    try environment.write { txn in
      let anchor = [UInt8](repeating: 0xFF, count: 8) + [UInt8](repeating: 0, count: 32)
      try txn.put(anchor, forKey: Array("anchor".utf8), in: meta)
    }
    environment.close()
    expectOpenFails(logURL, access: .readOnly, mentioning: "anchor's sequence number 18446744073709551615")
    expectOpenFails(logURL, access: .readWrite, mentioning: "anchor's sequence number 18446744073709551615")
  }
}
