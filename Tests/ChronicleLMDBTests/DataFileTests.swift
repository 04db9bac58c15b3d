import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

/// Reading an LMDB data file's meta pages without opening it.
@Suite struct DataFileTests {
  private func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).intValue
  }

  @Test func metaPagesNameTheLastCommittedTransaction() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "things", create: true)
    for n in 0..<UInt8(5) { try env.write { try $0.put([n], forKey: [n], in: db) } }
    let lastCommitted = try env.read { UInt64($0.id) }
    env.close()
    let dataPath = dir.path + "/data.mdb"

    let pages = DataFile.metaPages(inHead: try #require(DataFile.head(atPath: dataPath)))
    #expect(pages.count == 2)
    // LMDB alternates between its two meta pages: they hold the last two commits.
    #expect(Set(pages.map(\.transactionID)) == [lastCommitted, lastCommitted - 1])
    let newest = try #require(DataFile.newestMetaPage(atPath: dataPath))
    #expect(newest.transactionID == lastCommitted)
    #expect(newest.pageSize == Int(getpagesize()))
    #expect(newest.requiredSize <= (try fileSize(dataPath)))
    #expect(newest.requiredSize >= 4 * newest.pageSize)  // two meta pages, a root page, a data page
  }

  @Test func otherBytesHoldNoMetaPage() throws {
    #expect(DataFile.metaPages(inHead: []).isEmpty)
    #expect(DataFile.metaPages(inHead: [UInt8](repeating: 0x5A, count: DataFile.headSize)).isEmpty)
    // A missing file, in a directory of the test's own (a fixed path could exist on the machine).
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    #expect(DataFile.newestMetaPage(atPath: dir.path + "/missing/data.mdb") == nil)
  }

  @Test func aTruncatedHeadKeepsTheFirstPageOnly() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "things", create: true)
    try env.write { try $0.put([1], forKey: [1], in: db) }
    env.close()
    let head = try #require(DataFile.head(atPath: dir.path + "/data.mdb"))
    let first = try #require(DataFile.MetaPage(head, at: 0))
    let pages = DataFile.metaPages(inHead: Array(head.prefix(first.pageSize)))
    #expect(pages == [first])
    // A magic number one byte off is not LMDB's.
    var damaged = head
    damaged[16] ^= 0xFF
    #expect(DataFile.metaPages(inHead: damaged).isEmpty)
  }
}
