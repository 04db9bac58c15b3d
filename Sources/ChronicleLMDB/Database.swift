import CChronicleLMDB

/// A handle on a database inside an ``Environment``, valid for the environment's life.
public struct Database: Sendable, Hashable {
  let id: MDB_dbi
  /// The database's name; `nil` for the unnamed main database.
  public let name: String?

  var label: String { name ?? "<main>" }
}
