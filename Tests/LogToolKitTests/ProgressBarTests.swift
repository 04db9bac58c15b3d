import Testing

@testable import LogToolKit

/// The progress bar's text and the number formats every command shares.
@Suite struct ProgressBarTests {
  @Test func aStepOfOneUnitShowsOnlyItsTime() {
    // Compaction's "cutting" step reports 0/1 then 1/1: no counts, no rate.
    #expect(ProgressBar.render(label: "cutting", done: 0, total: 1, elapsed: 0.2, unit: "entries") == "cutting  0:01")
    #expect(ProgressBar.render(label: "cutting", done: 1, total: 1, elapsed: 0.0001, unit: "entries") == "cutting  0:01")
  }

  @Test func aRateAppearsOnlyOnceItMeansSomething() {
    // Done at once: no rate of millions per second from a microsecond's elapsed time.
    let instant = ProgressBar.render(label: "verify", done: 300, total: 300, elapsed: 0.000_2, unit: "entries")
    #expect(instant == "verify [########################] 100%  300/300 entries")
    let running = ProgressBar.render(label: "verify", done: 25_000, total: 100_000, elapsed: 2, unit: "entries")
    #expect(running == "verify [######------------------] 25%  25,000/100,000 entries  12,500 entries/s  ETA 0:06")
  }

  @Test func numbersAreGroupedTheSameWayEverywhere() {
    #expect(Format.grouped(1_341_500_000) == "1,341,500,000")
    #expect(Format.grouped(-4_098) == "-4,098")
    #expect(Format.decimal(1_234.56, digits: 1) == "1,234.6")
    #expect(Format.decimal(0.05, digits: 1) == "0.1")
    #expect(Format.decimal(33.333, digits: 1) == "33.3")
    #expect(Format.decimal(-2.5, digits: 2) == "-2.50")
    #expect(Format.rate(40_985, seconds: 1) == "1.000 s (40,985 entries/s)")
  }
}
