import Foundation
import Synchronization
import Testing

@testable import ChronicleLog

// MARK: - A type with hand-written CBOR

/// Counts the values read through the hand-written path.
private let movesReadByHand = Mutex(0)

/// An enum in `Codable`'s form for enums (one pair: case name to a map of the associated values),
/// with a hand-written conformance, so the codec's choice between the two paths shows.
enum LedgerMove: CBORCodable, Equatable {
  case transfer(from: String, to: String, cents: Int)
  case freeze

  static let examples: [LedgerMove] = [
    .transfer(from: "cash", to: "bank", cents: 1_250), .transfer(from: "", to: "é", cents: -1 << 40), .freeze,
  ]

  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: 1)
    switch self {
    case .transfer(let from, let to, let cents):
      writer.encode("transfer")
      writer.encodeMapHeader(count: 3)
      writer.encode("from")
      writer.encode(from)
      writer.encode("to")
      writer.encode(to)
      writer.encode("cents")
      writer.encode(cents)
    case .freeze:
      writer.encode("freeze")
      writer.encodeMapHeader(count: 0)
    }
  }

  init(from reader: inout CBORReader) throws {
    try reader.expectMap(count: 1)
    switch try reader.decode(String.self) {
    case "transfer":
      try reader.expectMap(count: 3)
      try reader.expectKey("from")
      let from = try reader.decode(String.self)
      try reader.expectKey("to")
      let to = try reader.decode(String.self)
      try reader.expectKey("cents")
      self = .transfer(from: from, to: to, cents: try reader.decode(Int.self))
    case "freeze":
      try reader.expectMap(count: 0)
      self = .freeze
    case let other:
      throw reader.error("unknown case \(other)")
    }
    movesReadByHand.withLock { $0 += 1 }
  }
}

private func pair(_ key: String, _ value: CBORValue) -> CBORMapEntry { CBORMapEntry(key: .text(key), value: value) }

// MARK: - Tests

/// `PayloadCodec` takes the ``CBORCodable`` path for CBOR when a type has one, and `Codable` otherwise.
@Suite struct PayloadCodecTests {
  @Test func cborUsesTheConformanceBothWays() throws {
    for move in LedgerMove.examples {
      let bytes = try PayloadCodec.cbor.encode(move)
      #expect(bytes == move.cborBytes)
      #expect(bytes == (try CBOREncoder().encode(move)))
      let before = movesReadByHand.withLock { $0 }
      #expect(try PayloadCodec.cbor.decode(LedgerMove.self, from: bytes) == move)
      #expect(movesReadByHand.withLock { $0 } == before + 1)
    }
  }

  @Test func jsonStillGoesThroughCodable() throws {
    let move = LedgerMove.transfer(from: "cash", to: "bank", cents: 12)
    let json = try PayloadCodec.json.encode(move)
    #expect(String(decoding: json, as: UTF8.self) == #"{"transfer":{"cents":12,"from":"cash","to":"bank"}}"#)
    let before = movesReadByHand.withLock { $0 }
    #expect(try PayloadCodec.json.decode(LedgerMove.self, from: json) == move)
    #expect(movesReadByHand.withLock { $0 } == before)
  }

  @Test func otherFormsFallBackToCodable() throws {
    // Keys in another order and an indefinite-length map: the hand-written
    // reader refuses them, Codable reads them.
    let reordered = CBORValue.map([
      pair("transfer", .map([pair("cents", .unsigned(7)), pair("to", .text("b")), pair("from", .text("a"))]))
    ]).encoded()
    #expect(reordered.withUnsafeBytes { LedgerMove(cborBytes: $0) } == nil)
    #expect(try PayloadCodec.cbor.decode(LedgerMove.self, from: reordered) == .transfer(from: "a", to: "b", cents: 7))

    let indefinite: [UInt8] = [0xbf, 0x66] + Array("freeze".utf8) + [0xa0, 0xff]
    #expect(try PayloadCodec.cbor.decode(LedgerMove.self, from: indefinite) == .freeze)
  }

  @Test func undecodablePayloadsReportCodablesError() throws {
    let wrongShape = CBORValue.map([pair("transfer", .unsigned(5))]).encoded()
    #expect(throws: DecodingError.self) { try PayloadCodec.cbor.decode(LedgerMove.self, from: wrongShape) }
    let unknownCase = CBORValue.map([pair("withdraw", .map([]))]).encoded()
    #expect(throws: DecodingError.self) { try PayloadCodec.cbor.decode(LedgerMove.self, from: unknownCase) }

    var trailing = LedgerMove.freeze.cborBytes
    trailing.append(0x00)
    let error = try #require(throws: CBORError.self) { try PayloadCodec.cbor.decode(LedgerMove.self, from: trailing) }
    #expect(error.reason.contains("trailing bytes"))
  }
}
