import Foundation
import Testing

@testable import ChronicleCBOR

// MARK: - Types that share key texts

/// Two enums whose cases have the same names: their `allKeys` are cached under each key type apart.
private enum Light: Codable, Equatable { case on, off(level: Int8), dim(Int) }
private enum Switch: Codable, Equatable { case on(by: String), off }

/// An integer of every width, to check the in-place integer reads against the tree's rules.
private struct Widths: Codable, Equatable {
  var i8: Int8, i16: Int16, i32: Int32, i64: Int64, i: Int
  var u8: UInt8, u16: UInt16, u32: UInt32, u64: UInt64, u: UInt
}

/// The plain-`Codable` fast paths: the per-type key cache of one-key maps and integers read in place.
@Suite struct CodableFastPathTests {
  /// Enums of two key types with the same key texts, decoded in turn (so each answer may come from
  /// the cache), come back as themselves: a cache filed by text alone would hand one type the other's keys.
  @Test func enumsWithTheSameCaseNamesDecodeAsThemselves() throws {
    let lights: [Light] = [.on, .off(level: -3), .dim(70_000), .on, .off(level: 127)]
    let switches: [Switch] = [.on(by: "jenny"), .off, .on(by: ""), .off]
    for _ in 0..<3 {
      for light in lights {
        #expect(try CBORDecoder().decode(Light.self, from: CBOREncoder().encode(light)) == light)
      }
      for item in switches {
        #expect(try CBORDecoder().decode(Switch.self, from: CBOREncoder().encode(item)) == item)
      }
    }
    // A key of another case than the cached ones, and a key no case has, after the cache is warm.
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(Light.self, from: [0xa1, 0x63, 0x6e, 0x6f, 0x70, 0xa0]) }
  }

  /// More distinct one-key maps of one key type than the cache keeps: every one still gets its own
  /// key (through the scan once the cache is full), and the cache stops filing at its limit.
  @Test func theKeyCacheIsBounded() throws {
    let count = CBORAllKeysCache.limit + 20
    for index in 0..<count {
      let bytes = try CBOREncoder().encode(["k\(index)": index])
      #expect(try CBORDecoder().decode(KeyNames.self, from: bytes).names == ["k\(index)"])
      #expect(try CBORDecoder().decode(KeyNames.self, from: bytes).names == ["k\(index)"], "answered again")
    }
    func isFiled(_ text: String) -> Bool {
      Array(text.utf8).withUnsafeBytes { CBORAllKeysCache.keys(of: AnyKey.self, text: $0) != nil }
    }
    #expect(isFiled("k0"))
    #expect(isFiled("k\(CBORAllKeysCache.limit - 1)"))
    #expect(!isFiled("k\(CBORAllKeysCache.limit)"), "nothing is filed past the limit")
  }

  /// Integers of every width and sign, at and past each type's bounds: what fits decodes exactly,
  /// what does not throws `dataCorrupted` (never traps), as the tree decoder does.
  @Test func integersReadInPlaceKeepTheTreesRules() throws {
    let extremes = Widths(
      i8: .min, i16: .min, i32: .min, i64: .min, i: .max, u8: .max, u16: .max, u32: .max, u64: .max, u: .max)
    #expect(try CBORDecoder().decode(Widths.self, from: CBOREncoder().encode(extremes)) == extremes)
    let small = Widths(i8: -1, i16: 300, i32: -70_000, i64: 1 << 40, i: -24, u8: 0, u16: 24, u32: 256, u64: 1 << 63, u: 23)
    #expect(try CBORDecoder().decode(Widths.self, from: CBOREncoder().encode(small)) == small)
    struct One<T: Codable & Equatable>: Codable, Equatable { var v: T }
    // -129 does not fit Int8; 2^63 does not fit Int64; -1 does not fit UInt8; 256 does not fit UInt8.
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(One<Int8>.self, from: CBOREncoder().encode(One(v: -129))) }
    #expect(throws: DecodingError.self) {
      try CBORDecoder().decode(One<Int64>.self, from: CBOREncoder().encode(One<UInt64>(v: 1 << 63)))
    }
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(One<UInt8>.self, from: CBOREncoder().encode(One(v: -1))) }
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(One<UInt8>.self, from: CBOREncoder().encode(One(v: 256))) }
    // The most negative CBOR integer (-2^64) fits no Swift integer type.
    #expect(throws: DecodingError.self) {
      try CBORDecoder().decode(One<Int64>.self, from: [0xa1, 0x61, 0x76, 0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
    }
    // A float that is a whole number still decodes as an integer (the tree's rule), through the old path.
    #expect(try CBORDecoder().decode(One<Int>.self, from: CBOREncoder().encode(One(v: 42.0))) == One(v: 42))
  }
}

/// A coding key of any text.
private struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}

/// The key texts of a map, as `allKeys` gives them.
private struct KeyNames: Decodable {
  var names: [String]
  init(from decoder: any Decoder) throws {
    names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
  }
}
