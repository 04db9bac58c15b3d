/// Every figure measured, by key, one sample per run.
///
/// Keys name the workload, the system and, for growth figures, the log
/// length: `w1.chronicle`, `w4.rate.grdb@1000000`.
struct Results: Sendable {
  private(set) var samples: [String: [Double]] = [:]

  mutating func add(_ key: String, _ value: Double) {
    samples[key, default: []].append(value)
  }

  /// The median over the runs, or `nil` if the figure was not measured.
  subscript(_ key: String) -> Double? {
    guard let values = samples[key], !values.isEmpty else { return nil }
    return median(values)
  }

  /// The median at log length `length`.
  subscript(_ key: String, at length: Int) -> Double? { self["\(key)@\(length)"] }

  /// How many runs measured `key`.
  func count(_ key: String) -> Int { samples[key]?.count ?? 0 }
}
