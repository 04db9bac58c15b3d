import Foundation
import ChronicleTestTools
import Testing

@testable import ChronicleCBOR

// MARK: - Types with hand-written CBOR

/// A struct (also fuzzed, below) with every kind of field the writer and reader handle, including
/// an optional that `Codable` leaves out when `nil` and a nested `Encodable`.
struct CodedSample: CBORCodable, Equatable {
  var name: String
  var count: Int
  var big: Int64
  var unsigned: UInt64
  var flag: Bool
  var ratio: Double
  var note: String?
  var tags: [String]
  var when: Date
  var balances: [String: Int]

  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: note == nil ? 9 : 10)
    writer.encode("name")
    writer.encode(name)
    writer.encode("count")
    writer.encode(count)
    writer.encode("big")
    writer.encode(big)
    writer.encode("unsigned")
    writer.encode(unsigned)
    writer.encode("flag")
    writer.encode(flag)
    writer.encode("ratio")
    writer.encode(ratio)
    if let note {
      writer.encode("note")
      writer.encode(note)
    }
    writer.encode("tags")
    writer.encodeArrayHeader(count: tags.count)
    for tag in tags { writer.encode(tag) }
    writer.encode("when")
    try! writer.encode(when)  // Encoding a Date cannot fail.
    writer.encode("balances")
    balances.encode(to: &writer)
  }

  init(from reader: inout CBORReader) throws {
    let pairs = try reader.decodeMapHeader()
    try reader.expectKey("name")
    name = try reader.decode(String.self)
    try reader.expectKey("count")
    count = try reader.decode(Int.self)
    try reader.expectKey("big")
    big = try reader.decode(Int64.self)
    try reader.expectKey("unsigned")
    unsigned = try reader.decode(UInt64.self)
    try reader.expectKey("flag")
    flag = try reader.decode(Bool.self)
    try reader.expectKey("ratio")
    ratio = try reader.decode(Double.self)
    if pairs == 10 {
      try reader.expectKey("note")
      note = try reader.decode(String.self)
    }
    try reader.expectKey("tags")
    tags = try (0..<reader.decodeArrayHeader()).map { _ in try reader.decode(String.self) }
    try reader.expectKey("when")
    when = try reader.decode(Date.self)
    try reader.expectKey("balances")
    balances = try [String: Int](from: &reader)
  }

  init(
    name: String, count: Int, big: Int64, unsigned: UInt64, flag: Bool, ratio: Double, note: String?,
    tags: [String], when: Date, balances: [String: Int]
  ) {
    (self.name, self.count, self.big, self.unsigned, self.flag) = (name, count, big, unsigned, flag)
    (self.ratio, self.note, self.tags, self.when, self.balances) = (ratio, note, tags, when, balances)
  }

  static let examples = [
    CodedSample(
      name: "cash", count: 3, big: 1 << 40, unsigned: 7, flag: true, ratio: 0.5, note: "ok", tags: ["a", "b"],
      when: Date(timeIntervalSince1970: 1_700_000_000), balances: ["a": 1, "b": -2, "c": 1 << 40]),
    CodedSample(
      name: "", count: -1, big: .min, unsigned: .max, flag: false, ratio: -1e300, note: nil, tags: [],
      when: Date(timeIntervalSince1970: 0), balances: [:]),
    CodedSample(
      name: "Zürich 🏦 " + String(repeating: "x", count: 300), count: .max, big: .max, unsigned: 0, flag: true,
      ratio: .infinity, note: "", tags: (0..<30).map(String.init), when: Date(timeIntervalSince1970: -86_400.25),
      balances: Dictionary(uniqueKeysWithValues: (0..<40).map { ("Zürich \($0)", $0 - 20) })),
  ]
}

/// An enum in `Codable`'s form for enums: one pair, case name to a map of the associated values.
enum CodedOperation: CBORCodable, Equatable {
  case deposit(String, cents: Int)
  case close

  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: 1)
    switch self {
    case .deposit(let account, let cents):
      writer.encode("deposit")
      writer.encodeMapHeader(count: 2)
      writer.encode("_0")
      writer.encode(account)
      writer.encode("cents")
      writer.encode(cents)
    case .close:
      writer.encode("close")
      writer.encodeMapHeader(count: 0)
    }
  }

  init(from reader: inout CBORReader) throws {
    try reader.expectMap(count: 1)
    switch try reader.decode(String.self) {
    case "deposit":
      try reader.expectMap(count: 2)
      try reader.expectKey("_0")
      let account = try reader.decode(String.self)
      try reader.expectKey("cents")
      self = .deposit(account, cents: try reader.decode(Int.self))
    case "close":
      try reader.expectMap(count: 0)
      self = .close
    case let other:
      throw reader.error("unknown case \(other)")
    }
  }
}

private func pair(_ key: String, _ value: CBORValue) -> CBORMapEntry { CBORMapEntry(key: .text(key), value: value) }

// MARK: - Tests

@Suite struct CBORCodableTests {
  @Test func writesTheBytesCodableWrites() throws {
    for sample in CodedSample.examples {
      #expect(sample.cborBytes == (try CBOREncoder().encode(sample)))
    }
    for operation in [CodedOperation.deposit("cash", cents: -5), .deposit("", cents: 1 << 33), .close] {
      #expect(operation.cborBytes == (try CBOREncoder().encode(operation)))
    }
  }

  @Test func otherFormsAreLeftToCodable() throws {
    // Keys in another order and an indefinite-length map: the hand-written
    // reader refuses them, Codable reads them.
    let reordered = CBORValue.map([
      pair("deposit", .map([pair("cents", .unsigned(7)), pair("_0", .text("cash"))]))
    ]).encoded()
    #expect(reordered.withUnsafeBytes { CodedOperation(cborBytes: $0) } == nil)
    #expect(try CBORDecoder().decode(CodedOperation.self, from: reordered) == .deposit("cash", cents: 7))

    let indefinite: [UInt8] = [0xbf, 0x65] + Array("close".utf8) + [0xa0, 0xff]
    #expect(indefinite.withUnsafeBytes { CodedOperation(cborBytes: $0) } == nil)
    #expect(try CBORDecoder().decode(CodedOperation.self, from: indefinite) == .close)

    var trailing = CodedOperation.close.cborBytes
    trailing.append(0x00)
    #expect(trailing.withUnsafeBytes { CodedOperation(cborBytes: $0) } == nil)
  }

  /// A `String`-keyed dictionary is written in the order `Codable` writes it; a map whose key comes
  /// twice is not read directly (the error names the key), so `Codable`'s rules decide it.
  @Test func stringKeyedDictionaries() throws {
    let balances = Dictionary(uniqueKeysWithValues: (0..<100).map { ("acct-\($0)", $0 * 7 - 300) })
    var writer = CBORWriter()
    balances.encode(to: &writer)
    #expect(writer.bytes == (try CBOREncoder().encode(balances)))
    let read = try writer.bytes.withUnsafeBytes { buffer in
      var reader = CBORReader(buffer)
      return try [String: Int](from: &reader)
    }
    #expect(read == balances)

    let repeated = CBORValue.map([pair("a", .unsigned(1)), pair("b", .unsigned(2)), pair("a", .unsigned(3))]).encoded()
    let error = repeated.withUnsafeBytes { buffer -> (any Error)? in
      var reader = CBORReader(buffer)
      do {
        _ = try [String: Int](from: &reader)
        return nil
      } catch { return error }
    }
    #expect("\(error.map { "\($0)" } ?? "none")".contains("the key \"a\" comes twice in a map"))
    let sample = CodedSample.examples[1]
    var bytes = sample.cborBytes
    // The sample's last value is its empty balances: a map of three pairs, one key repeated, instead.
    bytes.removeLast()
    bytes += repeated
    #expect(bytes.withUnsafeBytes { CodedSample(cborBytes: $0) } == nil)
    let viaCodable = try? CBORDecoder().decode(CodedSample.self, from: bytes)
    let viaCodec = try? bytes.withUnsafeBytes { try CBORCodableDispatch.decode(CodedSample.self, from: $0) }
    #expect(viaCodec == viaCodable)
  }

  /// Mutants of hand-written CBOR: whatever a `CBORCodable` reader accepts, `Codable` reads to the same value.
  @Test func handWrittenReadersAgreeWithCodable() {
    var random = SplitMix64(seed: 0xC0DA_B1E)
    let seeds = CodedSample.examples.map(\.cborBytes) + [CodedOperation.deposit("cash", cents: 7).cborBytes]
    var acceptedByHand = 0
    // Values compare by their bytes (a mutated float may be a NaN, unequal to itself), a sample's
    // balances by their sorted pairs: equal dictionaries need not iterate in the same order.
    func bytes(_ value: some CBORCodable) -> [UInt8] {
      guard var sample = value as? CodedSample else { return value.cborBytes }
      let balances = sample.balances.sorted { $0.key < $1.key }
      sample.balances = [:]
      return sample.cborBytes + Array("\(balances)".utf8)
    }
    func check<Value: CBORCodable>(_: Value.Type, _ input: [UInt8]) {
      guard let handWritten = input.withUnsafeBytes({ Value(cborBytes: $0) }) else { return }
      acceptedByHand += 1
      let codable = try? CBORDecoder().decode(Value.self, from: input)
      #expect(codable.map(bytes) == bytes(handWritten), "Codable reads \(String(describing: codable)) from \(input)")
    }
    for _ in 0..<4_000 {
      let input = CBORFuzzTests.mutate(seeds.randomElement(using: &random)!, &random)
      check(CodedSample.self, input)
      check(CodedOperation.self, input)
    }
    #expect(acceptedByHand > 50, "too few mutants decode to exercise the comparison: \(acceptedByHand)")
  }

  @Test func readerErrorsNameTheOffsetAndTheProblem() throws {
    func failure(_ bytes: [UInt8], _ read: (inout CBORReader) throws -> Void) -> CBORError? {
      bytes.withUnsafeBytes { raw in
        var reader = CBORReader(raw)
        do {
          try read(&reader)
          return nil
        } catch {
          return error as? CBORError
        }
      }
    }
    let truncated = failure([0x65, 0x61, 0x62]) { _ = try $0.decode(String.self) }
    #expect(truncated?.offset == 1)
    #expect(truncated?.reason.contains("truncated") == true)

    let wrongType = failure([0xa0, 0x01]) { _ = try $0.decode(String.self) }
    #expect(wrongType == CBORError(offset: 0, reason: "expected a text string, found initial byte 0xa0"))

    let badUTF8 = failure([0x63, 0x61, 0xff, 0x62]) { _ = try $0.decode(String.self) }
    #expect(badUTF8 == CBORError(offset: 2, reason: "invalid UTF-8 in text string"))

    let tooLarge = failure([0x1b, 0x80, 0, 0, 0, 0, 0, 0, 0]) { _ = try $0.decode(Int.self) }
    #expect(tooLarge == CBORError(offset: 0, reason: "integer out of range for Int64"))
    let smallest: [UInt8] = [0x3b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    #expect(try smallest.withUnsafeBytes { var reader = CBORReader($0); return try reader.decode(Int64.self) } == .min)

    let otherKey = failure([0x62, 0x74, 0x6f]) { try $0.expectKey("from") }
    #expect(otherKey == CBORError(offset: 0, reason: "expected the key \"from\", found \"to\""))

    let otherCount = failure([0xa2, 0x60, 0x60, 0x60, 0x60]) { try $0.expectMap(count: 1) }
    #expect(otherCount == CBORError(offset: 0, reason: "expected a map of 1 pairs, found 2"))
    let truncatedMap = failure([0xa2, 0x60]) { _ = try $0.decodeMapHeader() }
    #expect(truncatedMap == CBORError(offset: 1, reason: "truncated: a map of 2 entries in 1 bytes"))

    let hugeArray = failure([0x9a, 0xff, 0xff, 0xff, 0xff]) { _ = try $0.decodeArrayHeader() }
    #expect(hugeArray?.reason.contains("truncated") == true)

    let indefinite = failure([0x7f, 0x61, 0x61, 0xff]) { _ = try $0.decode(String.self) }
    #expect(indefinite?.reason == "expected a text string of definite length, found initial byte 0x7f")

    let empty = failure([]) { _ = try $0.decode(Bool.self) }
    #expect(empty == CBORError(offset: 0, reason: "truncated: expected a boolean"))
  }

  @Test func readsEveryScalarAndSkips() throws {
    var writer = CBORWriter()
    writer.encodeArrayHeader(count: 6)
    writer.encode(true)
    writer.encode(-24)
    writer.encode(1.25)
    writer.encodeNil()
    writer.encode(UInt64.max)
    writer.encode("skipped")
    let bytes = writer.bytes
    #expect(
      bytes
        == CBORValue.array([.bool(true), .negative(23), .float64(1.25), .null, .unsigned(.max), .text("skipped")])
        .encoded())
    try bytes.withUnsafeBytes { raw in
      var reader = CBORReader(raw)
      #expect(try reader.decodeArrayHeader() == 6)
      #expect(try reader.decode(Bool.self) == true)
      #expect(try reader.decode(Int.self) == -24)
      #expect(try reader.decode(Double.self) == 1.25)
      let wasNil = reader.decodeNil()
      #expect(wasNil)
      #expect(try reader.decode(UInt64.self) == .max)
      #expect(!reader.isAtEnd)
      try reader.skip()
      #expect(reader.isAtEnd)
      #expect(reader.offset == bytes.count)
    }
  }
}
