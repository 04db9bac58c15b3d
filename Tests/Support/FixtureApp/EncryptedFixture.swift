import ChronicleLog

// MARK: - The log of fixtures/v2-encrypted

/// What `fixtures/v2-encrypted` records: an encrypted log (format 2) of the counter app of
/// `v1-counter`, written by the same script: entries 1…60 sealed with ``firstKey`` and their type
/// names in the clear, then entries 61…120 sealed with ``secondKey`` and their type names sealed
/// (a rotated ring with ``KeyRing/sealsTypeNames``). Snapshots are sealed too.
///
/// Both keys are **public test keys**, published in the repository and its docs: never use them for
/// anything real.
public enum EncryptedFixture {
  /// The meta `app` value.
  public static let appID = "chronicle-encrypted"
  /// The fixed log identifier written into meta `log-id` before any record is sealed.
  public static let logID: [UInt8] = (0..<16).map { UInt8(0xC0 + $0) }
  /// The entries sealed with the first key (type names in the clear).
  public static let firstPart: ClosedRange<Int> = 1...60
  /// The entries sealed with the second key (type names sealed).
  public static let secondPart: ClosedRange<Int> = 61...120
  /// Where snapshots are written.
  public static let snapshotSeqs: Set<Int> = [50, 100, 120]
  /// The name of the key file in the fixture directory (``KeyRing/fileText`` of ``ring()``).
  public static let keyFileName = "test-keys.txt"

  /// The first public test key: bytes `0x00, 0x01, …, 0x1f`.
  public static let firstKeyBytes: [UInt8] = (0..<32).map { UInt8($0) }
  /// The second public test key: bytes `0xff, 0xfe, …, 0xe0`.
  public static let secondKeyBytes: [UInt8] = (0..<32).map { UInt8(0xFF - $0) }

  /// The ring that opens every record: both test keys, oldest first.
  public static func ring(sealsTypeNames: Bool = false) throws -> KeyRing {
    try KeyRing([EncryptionKey(bytes: firstKeyBytes), EncryptionKey(bytes: secondKeyBytes)], sealsTypeNames: sealsTypeNames)
  }
}
