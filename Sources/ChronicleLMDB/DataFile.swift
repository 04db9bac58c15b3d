import Foundation

/// What an LMDB data file (`data.mdb`) says about itself in its two meta pages, read from its
/// first bytes without opening it: enough to tell an LMDB file from another one, a truncated file
/// from a whole one, and which transaction was committed last.
///
/// ```swift
/// if let newest = DataFile.newestMetaPage(atPath: dir + "/data.mdb") {
///   print(newest.transactionID, newest.requiredSize)
/// }
/// ```
public enum DataFile {
  /// The number of bytes that hold both meta pages for any page size LMDB uses.
  public static let headSize = 2 * 65_536

  /// The fields of one meta page (`MDB_meta` after the 16-byte page header, 64-bit layout).
  public struct MetaPage: Sendable, Hashable {
    /// The page size the file was written with.
    public var pageSize: Int
    /// The number of the last page in use (`mm_last_pg`).
    public var lastPage: Int
    /// The id of the transaction that wrote this meta page (`mm_txnid`).
    public var transactionID: UInt64

    /// The bytes the file needs to hold every page in use.
    public var requiredSize: Int { (lastPage + 1) * pageSize }

    /// Reads the meta page at `offset` in `bytes`, or `nil` when it is not one (no LMDB magic
    /// number, an impossible page size, or too few bytes).
    public init?(_ bytes: [UInt8], at offset: Int) {
      func load<T: FixedWidthInteger>(_ position: Int, _: T.Type) -> T? {
        let start = offset + position
        guard start >= 0, start + MemoryLayout<T>.size <= bytes.count else { return nil }
        return bytes[start..<(start + MemoryLayout<T>.size)].withUnsafeBytes { $0.loadUnaligned(as: T.self) }
      }
      // Page header (16) + mm_magic (4) + mm_version (4) + mm_address (8) + mm_mapsize (8): the free
      // database's MDB_db starts at 40; its md_pad holds the page size. mm_last_pg at 136, mm_txnid at 144.
      guard load(16, UInt32.self) == 0xBEEF_C0DE,
        let pageSize = load(40, UInt32.self), pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0,
        let lastPage = load(136, UInt64.self), lastPage < UInt64(Int.max) / UInt64(pageSize),
        let transactionID = load(144, UInt64.self)
      else { return nil }
      self.pageSize = Int(pageSize)
      self.lastPage = Int(lastPage)
      self.transactionID = transactionID
    }
  }

  /// The meta pages in `head` (a data file's first bytes): none when the first page is not an
  /// LMDB meta page, else the first and, when readable, the second.
  public static func metaPages(inHead head: [UInt8]) -> [MetaPage] {
    guard let first = MetaPage(head, at: 0) else { return [] }
    return [first] + (MetaPage(head, at: first.pageSize).map { [$0] } ?? [])
  }

  /// Both meta page slots of `head`, each `nil` where the page is damaged (its flags, magic number
  /// or version are not a meta page's, all of which LMDB checks before it opens the file), with
  /// the page size read from the intact one; `nil` when neither is intact.
  public static func metaPageSlots(inHead head: [UInt8]) -> (pageSize: Int, pages: [MetaPage?])? {
    func intact(at offset: Int, pageSize: Int?) -> MetaPage? {
      // mp_flags (u16 at 10) has P_META (0x08); mm_version (u32 at 20) is 1.
      guard offset + 24 <= head.count, head[offset + 10] & 0x08 != 0,
        head[(offset + 20)..<(offset + 24)].withUnsafeBytes({ $0.loadUnaligned(as: UInt32.self) }) == 1,
        let page = MetaPage(head, at: offset), pageSize == nil || page.pageSize == pageSize
      else { return nil }
      return page
    }
    if let first = intact(at: 0, pageSize: nil) {
      return (first.pageSize, [first, intact(at: first.pageSize, pageSize: first.pageSize)])
    }
    for size in [4096, 8192, 16_384, 32_768, 65_536] {
      if let second = intact(at: size, pageSize: size) { return (size, [nil, second]) }
    }
    return nil
  }

  /// The newest of `pages`: LMDB uses the meta page with the larger transaction id.
  public static func newest(_ pages: [MetaPage]) -> MetaPage? {
    pages.max { $0.transactionID < $1.transactionID }
  }

  /// The first ``headSize`` bytes of the file at `path` (fewer for a shorter file), or `nil` when it cannot be read.
  public static func head(atPath path: String) -> [UInt8]? {
    guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? handle.close() }
    return [UInt8]((try? handle.read(upToCount: headSize)) ?? Data())
  }

  /// The newest meta page of the data file at `path`, or `nil` when it cannot be read or is not LMDB's.
  public static func newestMetaPage(atPath path: String) -> MetaPage? {
    head(atPath: path).flatMap { newest(metaPages(inHead: $0)) }
  }
}
