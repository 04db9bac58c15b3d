import Foundation

// MARK: - A value of every shape

/// A nested Codable value exercising every shape the codecs must carry.
public struct Sample: Codable, Hashable, Sendable {
  /// The cases of an enum with and without associated values.
  public enum Kind: Codable, Hashable, Sendable {
    /// No value.
    case plain
    /// Unlabelled and labelled values.
    case amount(Int64, currency: String)
    /// A nested collection.
    case nested(inner: [String: [Int]])
  }
  /// A UUID.
  public var id: UUID
  /// A date.
  public var when: Date
  /// A string beyond ASCII.
  public var name: String
  /// An optional, `nil` for every third sample.
  public var note: String?
  /// An array of enum cases.
  public var kinds: [Kind]
  /// Bytes.
  public var blob: Data
  /// A double.
  public var ratio: Double
  /// A float.
  public var small: Float
  /// A dictionary.
  public var flags: [String: Bool]

  /// Sample `n`: every field set from `n`, so samples differ and reproduce.
  public static func make(_ n: Int) -> Sample {
    Sample(
      id: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!,
      when: Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 0.25),
      name: "sample \(n) ✓", note: n % 3 == 0 ? nil : "note \(n)",
      kinds: [.plain, .amount(Int64(n) * -100, currency: "EUR"), .nested(inner: ["a": [n, n + 1]])],
      blob: Data((0..<UInt8(n % 32)).map { $0 }), ratio: Double(n) / 7, small: Float(n) * 0.5,
      flags: ["even": n % 2 == 0])
  }
}
