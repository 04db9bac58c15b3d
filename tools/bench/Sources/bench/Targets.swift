/// One of the performance targets, checked against the medians.
struct Target: Sendable {
  var name: String
  var measured: String
  var passed: Bool?
  /// The workload whose profile explains a miss.
  var profile: ProfileKind?

  var verdict: String {
    switch passed {
    case true?: "PASS"
    case false?: "MISS"
    case nil: "not measured"
    }
  }
}

extension Results {
  /// the performance targets with the figures that decide them.
  func targets(config: Config) -> [Target] {
    let largest = config.lengths.last ?? 0
    let small = config.lengths.contains(10_000) && largest != 10_000 ? 10_000 : (config.lengths.first ?? 0)
    let at = lengthText(largest)
    var targets: [Target] = []

    // The targets are decided by the ledger with `CBORCodable` actions; where
    // the same figure was measured with plain-`Codable` actions, it follows.
    func withCodable(_ text: String, _ codable: String?) -> String {
      guard let codable else { return text }
      return "\(text) with `CBORCodable` actions (Codable only: \(codable))"
    }

    func share(_ name: String, _ key: String, minimum: Double, peer: String, profile: ProfileKind) {
      let mine = self["\(key).chronicle"]
      let theirs = self["\(key).\(peer)"]
      guard let mine, let theirs else {
        targets.append(Target(name: name, measured: "–", passed: nil, profile: profile))
        return
      }
      func shown(_ value: Double) -> String { peer == "raw" ? percent(value) : times(value) }
      let codable = self["\(key).chronicle.codable"].map { "\(shown($0 / theirs)), \(rate($0))" }
      targets.append(
        Target(
          name: name, measured: withCodable("\(shown(mine / theirs)) (\(rate(mine)) vs \(rate(theirs)))", codable),
          passed: mine / theirs >= minimum, profile: profile))
    }

    share(
      "`.normal` appends ≥ 50 % of raw LMDB's one-transaction-per-put rate (W1)", "w1", minimum: 0.5, peer: "raw",
      profile: .sendNormal)
    share(
      "`.full` appends ≥ 80 % of raw LMDB's synced commit rate (W2)", "w2", minimum: 0.8, peer: "raw",
      profile: .sendFull)

    let batched = self["w3.chronicle"]
    targets.append(
      Target(
        name: "batched appends ≥ 1,000,000 actions/s (W3, batches of 1,000, `.normal`)",
        measured: withCodable(rate(batched), self["w3.chronicle.codable"].map(rate)),
        passed: batched.map { $0 >= 1_000_000 }, profile: .batch))

    let replay = self["w4.rate.chronicle", at: largest]
    let codableReplay = self["w4.rate.chronicle.codable", at: largest]
    targets.append(
      Target(
        name: "replay ≥ 1,000,000 actions/s with the binary codec (W4, CBOR, \(at) entries)",
        measured: withCodable(rate(replay), codableReplay.map(rate)), passed: replay.map { $0 >= 1_000_000 }, profile: .replay))

    let reopenLarge = self["w5.ms", at: largest]
    let reopenSmall = self["w5.ms", at: small]
    targets.append(
      Target(
        name: "reopening a \(grouped(Double(largest)))-entry log under 100 ms (W5)", measured: milliseconds(reopenLarge),
        passed: reopenLarge.map { $0 < 100 }, profile: .reopen))
    var growth: Double?
    if let reopenLarge, let reopenSmall { growth = reopenLarge / reopenSmall }
    targets.append(
      Target(
        name: "… and within 2× of a \(grouped(Double(small)))-entry one (W5)",
        measured: growth.map { "\(times($0)) (\(milliseconds(reopenLarge)) vs \(milliseconds(reopenSmall)))" } ?? "–",
        passed: growth.map { $0 <= 2 }, profile: .reopen))

    let stateAt = self["w6.median", at: largest]
    targets.append(
      Target(
        name: "`state(at:)` median under 5 ms at \(grouped(Double(largest))) entries (W6)",
        measured: "\(milliseconds(stateAt)) (p99 \(milliseconds(self["w6.p99", at: largest])))",
        passed: stateAt.map { $0 < 5 }, profile: .stateAt))

    let first = config.lengths.first ?? 0
    let memoryLarge = self["w8.anon.chronicle", at: largest]
    let memorySmall = self["w8.anon.chronicle", at: first]
    var memoryGrowth: Double?
    if let memoryLarge, let memorySmall { memoryGrowth = memoryLarge / memorySmall }
    targets.append(
      Target(
        name: "replay memory flat in log length (W8: peak anonymous memory at \(at) ≤ 1.5× that at \(lengthText(first)))",
        measured: memoryGrowth.map {
          let anonymous = config.lengths.map { mebibytes(self["w8.anon.chronicle", at: $0]) }.joined(separator: " → ")
          let resident = config.lengths.map { mebibytes(self["w8.rss.chronicle", at: $0]) }.joined(separator: " → ")
          let lengths = config.lengths.map(lengthText).joined(separator: " → ")
          return "\(times($0)): \(anonymous) at \(lengths) (peak RSS with the mapped log \(resident))"
        } ?? "–",
        passed: memoryGrowth.map { $0 <= 1.5 }, profile: nil))

    share("≥ 2× GRDB on appends, `.normal` (W1)", "w1", minimum: 2, peer: "grdb", profile: .sendNormal)
    share("≥ 2× GRDB on appends, `.full` (W2)", "w2", minimum: 2, peer: "grdb", profile: .sendFull)
    share("≥ 2× GRDB on batched appends (W3)", "w3", minimum: 2, peer: "grdb", profile: .batch)

    let grdbReplay = self["w4.rate.grdb", at: largest]
    var replayRatio: Double?
    if let replay, let grdbReplay { replayRatio = replay / grdbReplay }
    targets.append(
      Target(
        name: "≥ 2× GRDB on replay (W4, CBOR, \(at) entries)",
        measured: replayRatio.map {
          let codable = codableReplay.map { "\(ratio($0, grdbReplay)), \(rate($0))" }
          return withCodable("\(times($0)) (\(rate(replay)) vs \(rate(grdbReplay)))", codable)
        } ?? "–",
        passed: replayRatio.map { $0 >= 2 }, profile: .replay))

    let largeState = config.stateSizes.max() ?? 0
    let mine = self["w9.chronicle", at: largeState]
    let file = self["w9.json", at: largeState]
    var fileRatio: Double?
    if let mine, let file { fileRatio = mine / file }
    targets.append(
      Target(
        name: "≥ 100× the JSON file at a \(grouped(Double(largeState)))-item state (W9)",
        measured: fileRatio.map { "\(times($0)) (\(rate(mine)) vs \(rate(file)))" } ?? "–",
        passed: fileRatio.map { $0 >= 100 }, profile: .sendLargeState))
    targets += treeTargets()
    targets += concurrencyTargets(config: config)
    targets += encryptionTargets()
    targets += postgresTargets()
    return targets
  }

  /// The verifiable log's targets, over the tree workloads' figures.
  func treeTargets() -> [Target] {
    var targets: [Target] = []
    func withTree(_ name: String, _ key: String) {
      let on = self["\(key).on"]
      let off = self["\(key).off"]
      let share = self["\(key).ratio"]
      targets.append(
        Target(
          name: name, measured: share.map { "\(percent($0)) (\(rate(on)) vs \(rate(off)))" } ?? "–",
          passed: share.map { $0 >= 0.9 }, profile: nil))
    }
    withTree("`send` (`.normal`) with the Merkle tree ≥ 90 % of the rate without it", "tree.w1")
    withTree("batched appends (×1,000, `.normal`) with the Merkle tree ≥ 90 % of the rate without it", "tree.w3")
    let length = grouped(Double(TreeWorkloads.logLength))
    let inclusion = self["tree.inclusion.ms"]
    targets.append(
      Target(
        name: "inclusion proof median < 1 ms at \(length) entries", measured: milliseconds(inclusion),
        passed: inclusion.map { $0 < 1 }, profile: nil))
    let consistency = self["tree.consistency.ms"]
    targets.append(
      Target(
        name: "consistency proof median < 1 ms at \(length) entries", measured: milliseconds(consistency),
        passed: consistency.map { $0 < 1 }, profile: nil))
    let verify = self["tree.verify.s"]
    targets.append(
      Target(
        name: "`verify(checkpoint:verifier:)` of \(length) entries < 1 s", measured: secondsText(verify),
        passed: verify.map { $0 < 1 }, profile: nil))
    let signing = self["tree.sign.rate"]
    targets.append(
      Target(
        name: "signing ≥ 10,000 checkpoints/s", measured: rate(signing), passed: signing.map { $0 >= 10_000 },
        profile: nil))
    return targets
  }
}
