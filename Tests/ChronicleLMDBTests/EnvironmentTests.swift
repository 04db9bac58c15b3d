import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

private func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian) { Array($0) } }

@Suite struct EnvironmentTests {
  @Test func putGetDeleteRoundTrip() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "things", create: true)
    try env.write { txn in
      try txn.put(Array("one".utf8), forKey: key(1), in: db)
      try txn.put(Array("two".utf8), forKey: key(2), in: db)
    }
    #expect(try env.read { try $0.get(forKey: key(1), in: db) } == Array("one".utf8))
    #expect(try env.read { try $0.get(forKey: key(3), in: db) } == nil)
    #expect(try env.write { try $0.delete(forKey: key(1), in: db) })
    #expect(try env.write { try $0.delete(forKey: key(1), in: db) } == false)
    #expect(try env.read { try $0.statistics(of: db).entries } == 1)
  }

  @Test func throwingWriteLeavesNothing() throws {
    struct Boom: Error {}
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "things", create: true)
    #expect(throws: Boom.self) {
      try env.write { txn in
        try txn.put([1], forKey: key(1), in: db)
        throw Boom()
      }
    }
    #expect(try env.read { try $0.get(forKey: key(1), in: db) } == nil)
  }

  @Test func appendRefusesKeysOutOfOrder() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "log", create: true)
    try env.write { txn in try txn.put([2], forKey: key(2), in: db, flags: .append) }
    let error = #expect(throws: LMDBError.self) {
      try env.write { txn in try txn.put([1], forKey: key(1), in: db, flags: .append) }
    }
    #expect(error?.code == .keyExists)
    #expect(error?.description.contains(dir.path) == true)
  }

  @Test func cursorWalksBothWaysAndSeeks() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "log", create: true)
    try env.write { txn in
      for n: UInt64 in stride(from: 10, through: 100, by: 10) { try txn.put([UInt8(n)], forKey: key(n), in: db, flags: .append) }
    }
    let (forward, backward, atLeast, atMost, below): ([UInt8], [UInt8], UInt8?, UInt8?, UInt8?) = try env.read { txn in
      try txn.withCursor(on: db) { cursor in
        var forward: [UInt8] = []
        var item = try cursor.first()
        while let (_, value) = item { forward.append(value[0]); item = try cursor.next() }
        var backward: [UInt8] = []
        item = try cursor.last()
        while let (_, value) = item { backward.append(value[0]); item = try cursor.previous() }
        let atLeast = try key(35).withUnsafeBytes { try cursor.seek(atLeast: $0)?.value.first }
        let atMost = try key(35).withUnsafeBytes { try cursor.seek(atMost: $0)?.value.first }
        let below = try key(5).withUnsafeBytes { try cursor.seek(atMost: $0)?.value.first }
        return (forward, backward, atLeast, atMost, below)
      }
    }
    #expect(forward == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
    #expect(backward == forward.reversed())
    #expect(atLeast == 40)
    #expect(atMost == 30)
    #expect(below == nil)
  }

  @Test func mapGrowsPastItsInitialSize() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path, configuration: .init(mapSize: 256 << 10, maxMapSize: 64 << 20))
    let db = try env.openDatabase(named: "big", create: true)
    let value = [UInt8](repeating: 0xAB, count: 4096)
    // 8 MiB of values in one transaction, and then one per transaction.
    try env.write { txn in
      for n in 0..<UInt64(2048) { try txn.put(value, forKey: key(n), in: db, flags: .append) }
    }
    for n in 2048..<UInt64(2100) {
      try env.write { txn in try txn.put(value, forKey: key(n), in: db, flags: .append) }
    }
    #expect(env.mapSize > 8 << 20)
    #expect(try env.read { try $0.statistics(of: db).entries } == 2100)
  }

  @Test func mapCeilingGivesAClearError() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path, configuration: .init(mapSize: 256 << 10, maxMapSize: 1 << 20))
    let db = try env.openDatabase(named: "big", create: true)
    let value = [UInt8](repeating: 1, count: 4096)
    let error = #expect(throws: LMDBError.self) {
      try env.write { txn in
        for n in 0..<UInt64(1000) { try txn.put(value, forKey: key(n), in: db) }
      }
    }
    #expect(error?.code == .mapFull)
    #expect(error?.message.contains("ceiling") == true)
    // Nothing of the failed transaction is kept and the environment still works.
    #expect(try env.read { try $0.statistics(of: db).entries } == 0)
    try env.write { txn in try txn.put([1], forKey: key(1), in: db) }
  }

  @Test func readOnlyEnvironmentSeesCommitsButCannotWrite() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let writer = try Environment(path: dir.path)
    let db = try writer.openDatabase(named: "log", create: true)
    try writer.write { try $0.put([7], forKey: key(1), in: db) }
    writer.close()
    let reader = try Environment(path: dir.path, configuration: .init(flags: .readOnly))
    let readDB = try reader.openDatabase(named: "log")
    #expect(try reader.read { try $0.get(forKey: key(1), in: readDB) } == [7])
    #expect(throws: LMDBError.self) { try reader.write { try $0.put([8], forKey: key(2), in: readDB) } }
  }

  @Test func compactingCopyIsSmallerAndComplete() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "log", create: true)
    let value = [UInt8](repeating: 3, count: 1000)
    try env.write { txn in for n in 0..<UInt64(5000) { try txn.put(value, forKey: key(n), in: db) } }
    try env.write { txn in for n in 0..<UInt64(4900) { try txn.delete(forKey: key(n), in: db) } }
    let copy = dir.path + "/copy"
    try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
    try env.copy(to: copy, compacting: true)
    let size = { (path: String) in (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).intValue }
    #expect(try size(copy + "/data.mdb") * 4 < size(dir.path + "/data.mdb"))
    let copied = try Environment(path: copy)
    let copiedDB = try copied.openDatabase(named: "log")
    #expect(try copied.read { try $0.statistics(of: copiedDB).entries } == 100)
    #expect(try copied.read { try $0.get(forKey: key(4999), in: copiedDB) } == value)
  }

  @Test func closedEnvironmentThrows() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    env.close()
    let error = #expect(throws: LMDBError.self) { try env.read { _ in 1 } }
    #expect(error?.message.contains("closed") == true)
  }

  @Test func invalidFileIsRefusedWithItsPath() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    try Data(repeating: 0x5A, count: 65536).write(to: URL(fileURLWithPath: dir.path + "/data.mdb"))
    let error = #expect(throws: LMDBError.self) { try Environment(path: dir.path) }
    #expect(error?.code == .invalid)
    #expect(error?.operation.contains(dir.path) == true)
  }

  @Test func statisticsInfoAndReaderCheck() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path, configuration: .init(mapSize: 1 << 20))
    #expect(try env.info().mapSize == 1 << 20)
    #expect(try env.statistics().pageSize >= 4096)
    #expect(try env.readerCheck() == 0)
    try env.sync()
  }
}

@Suite struct ReaderTableTests {
  @Test func readersListsThisProcessWhileItReads() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "things", create: true)
    try env.write { txn in try txn.put(Array("one".utf8), forKey: key(1), in: db) }
    let lastID = try env.info().lastTransactionID
    let inside = try env.read { _ in try env.readers() }
    let mine = inside.filter { $0.pid == Environment.currentProcessID }
    #expect(mine.count == 1)
    #expect(mine.first?.transactionID == lastID)
    #expect(mine.first?.isProcessAlive == true)
    #expect(mine.first?.isStale == false)
    // A read transaction that ended gives its slot back (MDB_NOTLS).
    #expect(try env.readers().contains { $0.pid == Environment.currentProcessID && $0.transactionID != nil } == false)
    #expect(try env.readerCheck() == 0)
  }

  @Test func parsesReaderListLines() {
    let live = Environment.parseReaderLine("      \(Environment.currentProcessID) 7f01a2b3c700 42\n")
    #expect(live?.transactionID == 42)
    #expect(live?.thread == 0x7f01_a2b3_c700)
    #expect(live?.isProcessAlive == true)
    #expect(Environment.parseReaderLine("         7 7f01a2b3c700 -\n")?.transactionID == nil)
    #expect(Environment.parseReaderLine("    pid     thread     txnid\n") == nil)
    #expect(Environment.parseReaderLine("(no active readers)\n") == nil)
    // A pid no process has (beyond Linux's pid_max).
    #expect(Environment.parseReaderLine("  99999999 1 5\n")?.isStale == true)
  }

  @Test func freeListCountsPagesFreedByCommits() throws {
    let dir = try TemporaryDirectory(prefix: "lmdb-tests")
    defer { dir.remove() }
    let env = try Environment(path: dir.path)
    let db = try env.openDatabase(named: "things", create: true)
    let value = [UInt8](repeating: 7, count: 1_000)
    try env.write { txn in for n in 0..<2_000 { try txn.put(value, forKey: key(UInt64(n)), in: db) } }
    let before = try env.freeList()
    try env.write { txn in for n in 0..<2_000 { try txn.delete(forKey: key(UInt64(n)), in: db) } }
    try env.write { txn in try txn.put(value, forKey: key(1), in: db) }
    let after = try env.freeList()
    #expect(after.pageSize >= 512)
    #expect(after.freePages > before.freePages + 400, "deleting ~2 MB frees pages: \(before) → \(after)")
    #expect(after.freePages < after.usedPages)
    #expect(after.records >= 1)
    #expect(after.lastTransactionID > before.lastTransactionID)
  }
}
