import Foundation

extension Date {
  /// A date from microseconds since 1970.
  public init(microsecondsSince1970 micros: Int64) {
    self.init(timeIntervalSince1970: Double(micros) / 1_000_000)
  }

  /// Microseconds since 1970, as the log stores times.
  public var microsecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1_000_000).rounded()) }
}
