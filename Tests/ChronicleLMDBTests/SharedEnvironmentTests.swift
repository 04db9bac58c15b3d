import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

/// One environment per path per process: `Environment.shared(path:configuration:)`.
@Suite struct SharedEnvironmentTests {
  @Test func everySpellingOfAPathSharesOneEnvironmentUntilTheLastRelease() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let link = dir.path + "-link"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.path)
    defer { try? FileManager.default.removeItem(atPath: link) }

    let first = try Environment.shared(path: dir.path)
    let second = try Environment.shared(path: dir.path + "/")
    let third = try Environment.shared(path: link)
    #expect(first === second)
    #expect(first === third)

    let db = try first.openDatabase(named: "things", create: true)
    try first.write { try $0.put([1], forKey: [1], in: db) }
    third.releaseShared()
    second.releaseShared()
    // Still open for the remaining user.
    #expect(try first.read { try $0.get(forKey: [1], in: db) } == [1])
    first.releaseShared()
    let error = #expect(throws: LMDBError.self) { try first.read { _ in 1 } }
    #expect(error?.message.contains("closed") == true)

    // After the last release the path opens anew.
    let again = try Environment.shared(path: dir.path)
    defer { again.releaseShared() }
    #expect(again !== first)
    let reopened = try again.openDatabase(named: "things")
    #expect(try again.read { try $0.get(forKey: [1], in: reopened) } == [1])
  }

  @Test func aWriterIsRefusedWhileTheProcessHoldsThePathReadOnly() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let setup = try Environment(path: dir.path)
    setup.close()

    let reader = try Environment.shared(path: dir.path, configuration: .init(flags: .readOnly))
    let error = #expect(throws: LMDBError.self) { try Environment.shared(path: dir.path) }
    #expect(error?.code == .sharedReadOnly)
    #expect(error?.operation.contains(dir.path) == true)
    // A second reader shares it.
    let otherReader = try Environment.shared(path: dir.path, configuration: .init(flags: .readOnly))
    #expect(otherReader === reader)
    otherReader.releaseShared()
    reader.releaseShared()

    let writer = try Environment.shared(path: dir.path)
    defer { writer.releaseShared() }
    #expect(!writer.isReadOnly)
  }

  @Test func distinctDirectoriesGetDistinctEnvironments() throws {
    let one = try TemporaryDirectory(prefix: "lmdb-tests")
    let two = try TemporaryDirectory(prefix: "lmdb-tests")
    defer {
      one.remove()
      two.remove()
    }
    let a = try Environment.shared(path: one.path)
    let b = try Environment.shared(path: two.path)
    defer {
      a.releaseShared()
      b.releaseShared()
    }
    #expect(a !== b)
    #expect(throws: LMDBError.self) { try Environment.shared(path: one.path + "/missing") }
  }
}
