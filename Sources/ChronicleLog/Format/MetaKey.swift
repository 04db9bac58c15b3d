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
}
