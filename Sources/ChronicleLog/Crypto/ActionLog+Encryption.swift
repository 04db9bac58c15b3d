import ChronicleLMDB

extension ActionLog {
  /// Whether the log is encrypted (format 2): its entries and snapshots are sealed with a ``KeyRing``.
  public var isEncrypted: Bool { cipher != nil }

  /// The log id an encrypted log's records are bound to (meta `log-id`), created by a writer that
  /// finds none (the tree's opening creates it first, unless the tree is switched off).
  static func encryptionLogID(_ env: Environment, _ meta: Database, path: String, create: Bool) throws(LogError)
    -> [UInt8]
  {
    let key = Array(TreeStorage.logIDKey.utf8)
    let stored = try storage { try env.read { try $0.get(forKey: key, in: meta) } }
    if let stored {
      guard stored.count == 16 else {
        throw .corruptMeta(path: path, reason: "'log-id' has \(stored.count) bytes, expected 16")
      }
      return stored
    }
    guard create else {
      throw .corruptMeta(path: path, reason: "an encrypted log without 'log-id', which its records are bound to")
    }
    var generator = SystemRandomNumberGenerator()
    let id = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    try storage { try env.write { try $0.put(id, forKey: key, in: meta) } }
    return id
  }
}
