import Foundation

/// The keys of an encrypted log: the newest seals new records, every key opens the records it sealed.
///
/// Give a ring through ``ActionLog/Options/keyRing`` (or the engine's `StoreOptions.keyRing`) to
/// create an encrypted log, to append to one and to read its records. Keys come from the app (the
/// Keychain, a file, the environment) and are never written into the log: removing a key from the
/// ring makes the records it sealed unreadable for good, while the hash chain, the Merkle tree and
/// its checkpoints still verify (`docs/security.md`, *Crypto-shredding*).
///
/// ```swift
/// let ring = try KeyRing(contentsOf: URL(fileURLWithPath: "ledger.keys"))
/// let log = try ActionLog(directory: url, options: .init(appID: "ledger", keyRing: ring))
/// ```
public struct KeyRing: Sendable, Hashable {
  /// The keys, oldest first; the last one seals new records.
  public let keys: [EncryptionKey]
  /// Whether new entries keep their type name inside the ciphertext (`true`) or in the clear
  /// (`false`, the default: tools and auditors without the key see which kind of action each
  /// entry records).
  public var sealsTypeNames: Bool

  /// A ring of `keys`, oldest first.
  ///
  /// - Throws: ``LogError/invalidKey(reason:)`` for an empty ring or two keys with one identifier.
  public init(_ keys: [EncryptionKey], sealsTypeNames: Bool = false) throws {
    guard !keys.isEmpty else { throw LogError.invalidKey(reason: "a key ring needs at least one key") }
    var seen = Set<UInt32>()
    for key in keys where !seen.insert(key.id).inserted {
      throw LogError.invalidKey(reason: "two keys of the ring have the identifier \(key.idText)")
    }
    self.keys = keys
    self.sealsTypeNames = sealsTypeNames
  }

  /// Reads a key file: one key per line as 64 hex digits, oldest first; blank lines and lines
  /// starting with `#` are ignored.
  ///
  /// - Throws: ``LogError/invalidKey(reason:)`` naming the file and line.
  public init(contentsOf file: URL, sealsTypeNames: Bool = false) throws {
    let path = file.standardizedFileURL.path
    let text: String
    do { text = try String(contentsOf: file, encoding: .utf8) } catch {
      throw LogError.invalidKey(reason: "cannot read the key file \(path): \(error.localizedDescription)")
    }
    var keys: [EncryptionKey] = []
    for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = rawLine.trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("#") { continue }
      guard let bytes = Self.hexBytes(line), bytes.count == 32 else {
        throw LogError.invalidKey(reason: "\(path) line \(number + 1): a key is 64 hex digits")
      }
      keys.append(try EncryptionKey(bytes: bytes))
    }
    guard !keys.isEmpty else { throw LogError.invalidKey(reason: "the key file \(path) holds no key") }
    try self.init(keys, sealsTypeNames: sealsTypeNames)
  }

  /// The key that seals new records: the newest.
  public var current: EncryptionKey { keys[keys.count - 1] }

  /// The key with identifier `id`, or `nil` when the ring does not hold it.
  public func key(id: UInt32) -> EncryptionKey? { keys.first { $0.id == id } }

  /// The key file text of this ring (see ``init(contentsOf:sealsTypeNames:)``).
  public var fileText: String {
    keys.map { key in
      key.bytes.map { String(format: "%02x", $0) }.joined()
    }.joined(separator: "\n") + "\n"
  }

  static func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }

  private static func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
