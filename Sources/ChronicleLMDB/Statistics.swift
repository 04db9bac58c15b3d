import CChronicleLMDB

/// Page statistics of a database or of the environment (`MDB_stat`).
public struct Statistics: Sendable, Hashable {
  /// The page size in bytes.
  public var pageSize: Int
  /// The depth of the B-tree.
  public var depth: Int
  /// Internal pages.
  public var branchPages: Int
  /// Leaf pages.
  public var leafPages: Int
  /// Overflow pages (for large values).
  public var overflowPages: Int
  /// The number of key/value pairs.
  public var entries: Int

  init(_ stat: MDB_stat) {
    pageSize = Int(stat.ms_psize)
    depth = Int(stat.ms_depth)
    branchPages = stat.ms_branch_pages
    leafPages = stat.ms_leaf_pages
    overflowPages = stat.ms_overflow_pages
    entries = stat.ms_entries
  }
}
