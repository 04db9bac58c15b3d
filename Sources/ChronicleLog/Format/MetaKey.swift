/// The keys and byte layouts of the meta database. `docs/log-format.md` is the specification.
enum MetaKey {
  /// u32 BE format version.
  static let format = "format"
  /// UTF-8 app identifier.
  static let app = "app"
  /// u32 BE action schema version.
  static let schema = "schema"
  /// i64 BE creation time, µs since 1970.
  static let created = "created"
  /// u64 BE seq followed by the 32-byte hash.
  static let anchor = "anchor"
  /// Present (empty) only while `logtool import` builds the log: a log that holds it is the
  /// leftover of an import that was stopped, and no tool opens it.
  static let unfinishedImport = "unfinished-import"
}
