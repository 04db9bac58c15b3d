import ChronicleLog
import Foundation
import ChronicleTestTools
import Testing

/// A log is what the file system says it is, whatever the spelling of its path: a
/// second writer in this process is refused through a symbolic link, `..` components
/// or a trailing slash, and its refused open never releases the first writer's lock.
@Suite struct LogIdentityTests {
  /// A log directory `log` and a symbolic link `link` to it, inside `dir`.
  func logAndLink(in dir: TemporaryDirectory) throws -> (log: URL, link: URL) {
    let log = dir.child("log")
    let link = dir.child("link")
    try FileManager.default.createDirectory(at: log, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: log)
    return (log, link)
  }

  /// Every other spelling of `log`'s path: through the link, through the link to its parent, `..`, a trailing slash.
  func spellings(of log: URL, link: URL, in dir: TemporaryDirectory) throws -> [String] {
    let parentLink = dir.child("parent-link")
    try FileManager.default.createSymbolicLink(at: parentLink, withDestinationURL: dir.url)
    return [
      link.path, link.path + "/", link.path + "/.", parentLink.path + "/log",
      log.path + "/../log", log.path + "/", dir.path + "/./log",
    ]
  }

  func expectLocked(_ path: String) {
    do {
      let second = try ActionLog(directory: URL(fileURLWithPath: path))
      Issue.record("a second writer opened \(path)")
      try? second.close()
    } catch let error as LogError {
      guard case .locked = error else {
        Issue.record("\(path): \(error), expected locked")
        return
      }
    } catch {
      Issue.record("\(path): \(error)")
    }
  }

  @Test func aSecondWriterIsLockedOutWhateverThePathSpelling() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let (log, link) = try logAndLink(in: dir)
    let writer = try ActionLog(directory: log)
    defer { try? writer.close() }
    for path in try spellings(of: log, link: link, in: dir) { expectLocked(path) }
    // And the other way round: the first writer came through the link.
    let canonical = writer.path
    try writer.close()
    let throughLink = try ActionLog(directory: link)
    defer { try? throughLink.close() }
    #expect(throughLink.path == canonical)
    expectLocked(log.path)
  }

  /// The refused second open through a link must not touch the lock file: closing any
  /// descriptor of it would drop this process's record lock, and another process could write.
  @Test func aRefusedSecondOpenKeepsTheFirstWritersLock() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let (log, link) = try logAndLink(in: dir)
    let writer = try ActionLog(directory: log)
    defer { try? writer.close() }
    _ = try writer.append(try NewEntry(encoding: 1, typeName: "n", codec: .json))
    for path in try spellings(of: log, link: link, in: dir) {
      expectLocked(path)
      // A reader through the same spelling shares the writer's environment and closes cleanly.
      let reader = try ActionLog(directory: URL(fileURLWithPath: path), access: .readOnly)
      #expect(try reader.count() == 1)
      try reader.close()
    }
    for path in [log.path, link.path] {
      let probe = try ChildProcess("chronicle-log-probe", ["try-writer", path])
      let line = probe.readLine()
      #expect(line?.contains("is locked") == true, "another process through \(path): \(line ?? "nothing")")
      #expect(probe.wait() == 3)
    }
    // The first writer still works, and its entries are all there.
    _ = try writer.append(try NewEntry(encoding: 2, typeName: "n", codec: .json))
    #expect(try writer.verify().isValid)
    #expect(try writer.count() == 2)
  }

  /// Compaction is a writer too: it is refused while a store's writer holds the log through another spelling.
  @Test func compactionThroughALinkIsLockedOut() throws {
    let dir = try TemporaryDirectory()
    defer { dir.remove() }
    let (log, link) = try logAndLink(in: dir)
    let writer = try ActionLog(directory: log)
    defer { try? writer.close() }
    _ = try writer.append(try NewEntry(encoding: 1, typeName: "n", codec: .json))
    try writer.writeSnapshot(at: 1, state: Array("{}".utf8), codec: .json, schemaVersion: 1)
    #expect(throws: LogError.self) {
      try ActionLog.compact(directory: link, before: 1, disposal: .discard)
    }
    let probe = try ChildProcess("chronicle-log-probe", ["try-writer", log.path])
    #expect(probe.readLine()?.contains("is locked") == true)
    #expect(probe.wait() == 3)
    _ = try writer.append(try NewEntry(encoding: 2, typeName: "n", codec: .json))
    #expect(try writer.count() == 2)
  }
}
