import ChronicleLMDB

// MARK: - Cutting a log's stored Merkle tree

extension Transaction {
  /// Deletes every stored subtree hash in `tree` (keys `u8 level ‖ u64be index`, docs/log-format.md) whose
  /// subtree reaches past the first `leaves` leaves, as an interrupted tree build or an older writer leaves it.
  public func deleteSubtrees(beyond leaves: UInt64, in tree: Database) throws {
    let keys = try withCursor(on: tree) { cursor in
      var keys: [[UInt8]] = []
      var item = try cursor.first()
      while let (key, _) = item {
        keys.append(Array(key))
        item = try cursor.next()
      }
      return keys
    }
    for key in keys where (key.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } + 1) << UInt64(key[0]) > leaves {
      _ = try delete(forKey: key, in: tree)
    }
  }
}
