import ChronicleLog
import Foundation
import ChronicleLMDB
import ChronicleTestTools
import Testing

/// The pages of a log's `data.mdb` that the damage tests change, found by reading LMDB's
/// on-disk layout (64-bit): the meta pages, the main database's leaf page that names the
/// `entries` database, and that database's root branch page.
struct EntriesTree {
  /// The page size.
  var pageSize: Int
  /// The page number of the `entries` root (a branch page when the tree has depth 2 or more).
  var rootPage: Int
  /// The byte offsets, in the file, of the root's child nodes in key order.
  var childNodes: [Int]
  /// The first sequence number below each child (the first child's is the log's first).
  var childFirstSeqs: [UInt64]
  /// The page number of each child.
  var childPages: [Int]
  /// The byte offsets, in the file, of the `snapshots` database's nodes (a single leaf page), in key order.
  var snapshotNodes: [Int]

  init(_ data: [UInt8]) throws {
    func load<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
      data[offset..<(offset + MemoryLayout<T>.size)].withUnsafeBytes { $0.loadUnaligned(as: T.self) }
    }
    let pageSize = Int(load(40, UInt32.self))
    self.pageSize = pageSize
    // The newer of the two meta pages; MDB_meta follows the 16-byte page header.
    let meta = load(144, UInt64.self) >= load(pageSize + 144, UInt64.self) ? 0 : pageSize
    let mainRoot = Int(load(meta + 128, UInt64.self))
    /// The (offset of each node, key) of the page at `page`.
    func nodes(_ page: Int) -> [(offset: Int, key: [UInt8])] {
      let base = page * pageSize
      let lower = Int(load(base + 12, UInt16.self))
      return (0..<((lower - 16) / 2)).map { index in
        let node = base + Int(load(base + 16 + 2 * index, UInt16.self))
        let keySize = Int(load(node + 6, UInt16.self))
        return (node, Array(data[(node + 8)..<(node + 8 + keySize)]))
      }
    }
    guard let named = nodes(mainRoot).first(where: { $0.key == Array("entries".utf8) }),
      let snapshots = nodes(mainRoot).first(where: { $0.key == Array("snapshots".utf8) })
    else {
      throw DamageError("no entries or snapshots database in the main database's root page")
    }
    let snapshotsRoot = Int(load(snapshots.offset + 8 + 9 + 40, UInt64.self))
    guard load(snapshotsRoot * pageSize + 10, UInt16.self) & 0x02 != 0 else {
      throw DamageError("the snapshots tree is more than one leaf page")
    }
    snapshotNodes = nodes(snapshotsRoot).map(\.offset)
    // The node's data (an MDB_db) follows its 8-byte header and key: md_root at +40.
    let rootPage = Int(load(named.offset + 8 + 7 + 40, UInt64.self))
    self.rootPage = rootPage
    guard load(rootPage * pageSize + 10, UInt16.self) & 0x01 != 0 else {
      throw DamageError("the entries tree has depth 1: write more entries")
    }
    let children = nodes(rootPage)
    childNodes = children.map(\.offset)
    childFirstSeqs = children.enumerated().map { index, child in
      index == 0 ? 1 : child.key.reduce(0) { $0 << 8 | UInt64($1) }
    }
    childPages = children.map { child in
      Int(load(child.offset, UInt16.self)) | Int(load(child.offset + 2, UInt16.self)) << 16
        | Int(load(child.offset + 4, UInt16.self)) << 32
    }
  }
}

struct DamageError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// Changes `bytes` at `offset` of `file` in place.
func overwrite(_ file: URL, at offset: Int, with bytes: [UInt8]) throws {
  let handle = try FileHandle(forUpdating: file)
  defer { try? handle.close() }
  try handle.seek(toOffset: UInt64(offset))
  try handle.write(contentsOf: Data(bytes))
}

/// Logs with damaged pages: verify reports them (a read error is never the end of the
/// data; a page that crashes the reader is reported, the tool survives) and salvage
/// copies the intact prefix and says what was lost.
@Suite(.serialized) struct DamagedLogTests {
  static let entries = 1_500

  /// A log of ``entries`` entries (a tree of depth 2: a root branch page over leaf pages) with snapshots every 500, its tree, and the child of the root to damage.
  func damagedCopy(in scratch: TemporaryDirectory, name: String) throws -> (URL, EntriesTree, child: Int) {
    let log = scratch.child(name)
    try makeLog(at: log, count: Self.entries, snapshotEvery: 500, payloadBytes: 200)
    let data = log.appendingPathComponent("data.mdb")
    let tree = try EntriesTree([UInt8](try Data(contentsOf: data)))
    #expect(tree.childPages.count >= 4, "the root has \(tree.childPages.count) children")
    return (log, tree, tree.childPages.count / 2)
  }

  /// A child pointer in a branch page aimed past the file's end: `MDB_PAGE_NOTFOUND` when
  /// the scan reaches it. Before the fix, verify took that error for the end of the data.
  @Test func aReadErrorIsAProblemNotTheEnd() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let (log, tree, child) = try damagedCopy(in: scratch, name: "log")
    try overwrite(log.appendingPathComponent("data.mdb"), at: tree.childNodes[child], with: [0xFF, 0xFF, 0xFF, 0xFF])
    let lost = tree.childFirstSeqs[child]

    let actionLog = try ActionLog(directory: log, access: .readOnly)
    defer { try? actionLog.close() }
    let report = try actionLog.verify()
    #expect(!report.isValid)
    #expect(report.firstBadSeq == lost, "\(report.problems)")
    #expect(report.problems.contains { $0.message.contains("cannot be read") }, "\(report.problems)")
    // The snapshots are checked in a transaction of their own: the read error does not spoil them.
    #expect(!report.problems.contains { $0.message.contains("MDB_BAD_TXN") }, "\(report.problems)")
    #expect(report.snapshotsChecked == Self.entries / 500)
    #expect(report.problems.contains { $0.message.contains("were not checked") && $0.message.contains("\(Self.entries)") })

    let result = try Tool.run(["verify", log.path])
    #expect(result.status == 1, "stdout: \(result.stdout) stderr: \(result.stderr)")
    #expect(result.errorLines.count == 1)
    #expect(result.errorLines.first?.contains("at entry \(lost)") == true, "\(result.stderr)")
    #expect(result.stdout.contains("FAILED"))

    let out = scratch.child("salvaged")
    let salvage = try Tool.run(["salvage", log.path, out.path])
    #expect(salvage.status == 1, "stderr: \(salvage.stderr)")
    #expect(salvage.stdout.contains("entries \(lost)…\(Self.entries)"), "\(salvage.stdout)")
    #expect(salvage.errorLines.count == 1)
    let recovered = try ActionLog(directory: out, access: .readOnly)
    defer { try? recovered.close() }
    #expect(try recovered.verify().isValid)
    #expect(try recovered.head().seq == lost - 1)
    let original = try ActionLog(directory: log, access: .readOnly)
    defer { try? original.close() }
    #expect(try recovered.head().hash == original.record(at: lost - 1)?.hash)
    // Snapshots at or before the last copied entry are kept; later ones are reported lost.
    let kept = try recovered.snapshots().map(\.seq)
    #expect(kept == stride(from: 500, to: Int(lost), by: 500).map(UInt64.init))
    for seq in stride(from: (Int(lost) + 499) / 500 * 500, through: Self.entries, by: 500) {
      #expect(salvage.stdout.contains("snapshot \(seq)"), "snapshot \(seq) in \(salvage.stdout)")
    }
  }

  /// Bytes flipped in the header of a leaf page in the middle of the file: LMDB may crash the
  /// reading process. `logtool verify` reports the damage (exit 1, one line) and survives;
  /// `logtool salvage` copies every entry before the page.
  @Test func aDamagedPageHeaderIsReportedAndSalvaged() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let (log, tree, child) = try damagedCopy(in: scratch, name: "log")
    let page = tree.childPages[child]
    let data = log.appendingPathComponent("data.mdb")
    let flags = [UInt8](try Data(contentsOf: data))[page * tree.pageSize + 10]
    #expect(flags & 0x02 != 0, "page \(page) is a leaf page (flags \(flags))")
    // The page header after its page number (flags, bounds) and the first node pointer: all 0xFF.
    try overwrite(data, at: page * tree.pageSize + 8, with: [UInt8](repeating: 0xFF, count: 10))
    let lost = tree.childFirstSeqs[child]

    let result = try Tool.run(["verify", log.path])
    #expect(result.status == 1, "stdout: \(result.stdout) stderr: \(result.stderr)")
    #expect(result.errorLines.count == 1, "\(result.stderr)")
    let line = result.errorLines.first ?? ""
    #expect(line.contains("is damaged") || line.contains("does not verify"), "\(line)")
    #expect(line.contains(log.path), "\(line)")

    let out = scratch.child("salvaged")
    let salvage = try Tool.run(["salvage", log.path, out.path])
    #expect(salvage.status == 1, "stdout: \(salvage.stdout) stderr: \(salvage.stderr)")
    #expect(salvage.stdout.contains("lost"), "\(salvage.stdout)")
    let recovered = try ActionLog(directory: out, access: .readOnly)
    defer { try? recovered.close() }
    #expect(try recovered.verify().isValid)
    #expect(try recovered.head().seq == lost - 1, "\(salvage.stdout)")
  }

  /// One of the two LMDB meta pages overwritten (LMDB refuses the whole file): salvage reads the
  /// log through the other one and copies every entry that one names, saying which meta page it used.
  @Test(arguments: [0, 1])
  func aDamagedMetaPageIsSalvagedThroughTheOther(_ damaged: Int) throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 2_000, snapshotEvery: 500)
    let data = log.appendingPathComponent("data.mdb")
    let pageSize = try #require(DataFile.newestMetaPage(atPath: data.path)).pageSize
    try overwrite(data, at: damaged * pageSize + 8, with: [UInt8](repeating: 0x5A, count: 24))
    let refused = try Tool.run(["verify", log.path])
    #expect(refused.status != 0, "LMDB refuses the file: \(refused.stdout) \(refused.stderr)")

    let out = scratch.child("salvaged")
    let salvage = try Tool.run(["salvage", log.path, out.path])
    #expect(salvage.status == 1, "stdout: \(salvage.stdout) stderr: \(salvage.stderr)")
    #expect(salvage.stdout.contains("meta page \(damaged) of \(data.path) is damaged"), "\(salvage.stdout)")
    let recovered = try ActionLog(directory: out, access: .readOnly)
    defer { try? recovered.close() }
    #expect(try recovered.verify().isValid)
    // The log was written in batches of 1,000: the other meta page names the state after one of them.
    #expect([1_000, 2_000].contains(try recovered.head().seq), "\(salvage.stdout)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
      .filter { $0.hasPrefix("chronicle-salvage-") }.isEmpty)
  }

  /// The first node of a leaf page of entries, and the first snapshot's node, claim values of
  /// 2 GiB: reading them runs past the memory map and kills the reader with a signal.
  /// `logtool verify` survives and reports the damage (exit 1, one line naming the signal);
  /// `logtool salvage` copies every entry before the page, resumes after the child that the
  /// snapshot killed, and reports that snapshot lost with the signal.
  @Test func aPageThatKillsTheReaderIsReportedAndSalvaged() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let (log, tree, child) = try damagedCopy(in: scratch, name: "log")
    let page = tree.childPages[child]
    let data = log.appendingPathComponent("data.mdb")
    let bytes = [UInt8](try Data(contentsOf: data))
    let base = page * tree.pageSize
    #expect(bytes[base + 10] & 0x02 != 0, "page \(page) is a leaf page")
    let node = base + Int(bytes[base + 16]) | Int(bytes[base + 17]) << 8
    // mn_lo and mn_hi: the value's size, now 0x7FFFFFFF bytes.
    try overwrite(data, at: node, with: [0xFF, 0xFF, 0xFF, 0x7F])
    try overwrite(data, at: tree.snapshotNodes[0], with: [0xFF, 0xFF, 0xFF, 0x7F])
    let lost = tree.childFirstSeqs[child]

    let result = try Tool.run(["verify", log.path])
    #expect(result.status == 1, "stdout: \(result.stdout) stderr: \(result.stderr)")
    #expect(result.errorLines.count == 1, "\(result.stderr)")
    let line = result.errorLines.first ?? ""
    #expect(line.contains("\(log.path) is damaged: reading it killed the verifier with SIG"), "\(line)")
    #expect(result.stdout.isEmpty, "\(result.stdout)")

    let out = scratch.child("salvaged")
    let salvage = try Tool.run(["salvage", log.path, out.path])
    #expect(salvage.status == 1, "stdout: \(salvage.stdout) stderr: \(salvage.stderr)")
    #expect(salvage.stdout.contains("entries \(lost)…\(Self.entries)"), "\(salvage.stdout)")
    #expect(salvage.stdout.contains("snapshot 500: reading it killed the reader with SIG"), "\(salvage.stdout)")
    #expect(salvage.errorLines.count == 1, "\(salvage.stderr)")
    let recovered = try ActionLog(directory: out, access: .readOnly)
    defer { try? recovered.close() }
    #expect(try recovered.verify().isValid)
    #expect(try recovered.head().seq == lost - 1, "\(salvage.stdout)")
    #expect(try recovered.snapshots().map(\.seq) == stride(from: 1000, to: Int(lost), by: 500).map(UInt64.init))
  }

  /// An intact log salvages completely: exit 0, every entry and snapshot.
  @Test func anIntactLogSalvagesCompletely() throws {
    let scratch = try TemporaryDirectory(prefix: "logtool-tests")
    defer { scratch.remove() }
    let log = scratch.child("log")
    try makeLog(at: log, count: 1_200, snapshotEvery: 500)
    let out = scratch.child("salvaged")
    let salvage = try Tool.run(["salvage", log.path, out.path, "--json"])
    #expect(salvage.status == 0, "stderr: \(salvage.stderr)")
    #expect(salvage.stdout.contains("\"complete\":true"), "\(salvage.stdout)")
    #expect(try RawDump(out) == RawDump(log))
    // A second salvage into the same directory is refused unless it is this log's.
    let other = scratch.child("other")
    try makeLog(at: other, count: 10, snapshotEvery: 500)
    let refused = try Tool.run(["salvage", other.path, out.path])
    #expect(refused.status == 2, "\(refused.stderr)")
    #expect(refused.stderr.contains("holds another log"), "\(refused.stderr)")
  }
}
