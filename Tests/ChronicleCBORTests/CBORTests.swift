import Foundation
import ChronicleTestTools
import Testing

@testable import ChronicleCBOR

// MARK: - Helpers

/// The bytes of hexadecimal text that may contain whitespace.
private func bytes(_ hex: String) -> [UInt8] {
  guard let bytes = [UInt8](hex: String(hex.filter { !$0.isWhitespace })) else { preconditionFailure("bad hex \(hex)") }
  return bytes
}

private func hex(_ data: [UInt8]) -> String { data.hex }

private func text(_ s: String) -> CBORValue { .text(s) }

/// A finite `Double` with a random sign, a random 52-bit fraction and an exponent from `exponents`.
private func randomDouble(exponents: ClosedRange<Int>, _ rng: inout SplitMix64) -> Double {
  let significand = 1 + Double(rng.next() >> 12) * 0x1p-52
  let sign: FloatingPointSign = rng.next() & 1 == 0 ? .plus : .minus
  return Double(sign: sign, exponent: Int.random(in: exponents, using: &rng), significand: significand)
}

private func entry(_ key: String, _ value: CBORValue) -> CBORMapEntry {
  CBORMapEntry(key: .text(key), value: value)
}

/// Coding path as strings, with integer keys shown as "#n".
private func pathStrings(_ path: [any CodingKey]) -> [String] {
  path.map { key in key.intValue.map { "#\($0)" } ?? key.stringValue }
}

private func parseError(_ hexInput: String) -> CBORError? {
  do {
    _ = try CBORValue(decoding: bytes(hexInput))
    return nil
  } catch let error as CBORError {
    return error
  } catch {
    Issue.record("unexpected error type \(error)")
    return nil
  }
}


// MARK: - Codable fixtures

private enum CBORTestShape: Codable, Equatable {
  case circle(radius: Double)
  case rect(Double, Double)
  case point
  case labelled(name: String, tags: [String]?)
}

private struct CBORTestInts: Codable, Equatable {
  var i: Int
  var i8: Int8
  var i16: Int16
  var i32: Int32
  var i64: Int64
  var u: UInt
  var u8: UInt8
  var u16: UInt16
  var u32: UInt32
  var u64: UInt64

  static let min = CBORTestInts(
    i: .min, i8: .min, i16: .min, i32: .min, i64: .min, u: .min, u8: .min, u16: .min, u32: .min, u64: .min)
  static let max = CBORTestInts(
    i: .max, i8: .max, i16: .max, i32: .max, i64: .max, u: .max, u8: .max, u16: .max, u32: .max, u64: .max)
}

private struct CBORTestModel: Codable, Equatable {
  var id: UUID
  var created: Date
  var blob: Data
  var link: URL
  var price: Decimal
  var shapes: [CBORTestShape]
  var optionalInt: Int?
  var optionalNone: String?
  var nestedOptional: Int??
  var dict: [String: [Int]]
  var intDict: [Int: String]
  var emptyString: String
  var emptyArray: [Int]
  var emptyDict: [String: Int]
  var unicode: String
  var smallest: CBORTestInts
  var largest: CBORTestInts
  var flags: [Bool]
  var optionals: [Int?]
  var children: [CBORTestModel]

  static func sample(depth: Int = 1) -> CBORTestModel {
    CBORTestModel(
      id: UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!,
      created: Date(timeIntervalSince1970: 1_700_000_000.123_456),
      blob: Data([0, 1, 2, 0xfe, 0xff]),
      link: URL(string: "https://example.com/path?q=1&r=%20#frag")!,
      price: Decimal(string: "-12345.6789")!,
      shapes: [.circle(radius: 2.5), .rect(3, 4), .point, .labelled(name: "ü水🙂", tags: nil), .labelled(name: "", tags: [])],
      optionalInt: 42,
      optionalNone: nil,
      nestedOptional: .some(.some(7)),
      dict: ["a": [1, 2, 3], "": [], "ключ": [-1]],
      intDict: [1: "one", -2: "minus two", 300: "three hundred"],
      emptyString: "",
      emptyArray: [],
      emptyDict: [:],
      unicode: "e\u{301} 👩‍👩‍👧 \u{0} \"quoted\" \\ \n",
      smallest: .min,
      largest: .max,
      flags: [true, false],
      optionals: [1, nil, 3],
      children: depth > 0 ? [sample(depth: depth - 1)] : [])
  }
}

private class CBORTestAnimal: Codable {
  var name: String

  init(name: String) {
    self.name = name
  }
}

private final class CBORTestDog: CBORTestAnimal, Equatable {
  var goodBoy: Bool

  init(name: String, goodBoy: Bool) {
    self.goodBoy = goodBoy
    super.init(name: name)
  }

  private enum CodingKeys: String, CodingKey {
    case goodBoy
  }

  required init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    goodBoy = try container.decode(Bool.self, forKey: .goodBoy)
    try super.init(from: container.superDecoder())
  }

  override func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(goodBoy, forKey: .goodBoy)
    try super.encode(to: container.superEncoder())
  }

  static func == (lhs: CBORTestDog, rhs: CBORTestDog) -> Bool {
    lhs.name == rhs.name && lhs.goodBoy == rhs.goodBoy
  }
}

private struct CBORTestFloats: Codable {
  var doubles: [Double]
  var floats: [Float]
  var single: Double
  var singleFloat: Float
}

/// A permissive target for fuzzing: everything optional, so mutations often decode.
private struct CBORFuzzTarget: Codable, Equatable {
  var a: Int?
  var b: String?
  var c: [Double]?
  var d: [String: Int8]?
  var e: CBORTestShape?
  var f: Data?
  var g: Date?
  var h: UUID?
  var i: URL?
  var j: Bool?
  var k: [CBORFuzzTarget]?
  var l: Float?
  var m: [Int: UInt16]?
}

// MARK: - RFC 8949 Appendix A

@Suite("CBOR RFC 8949 Appendix A")
struct CBORAppendixATests {
  /// Vectors whose canonical encoding is exactly the RFC's bytes.
  static let vectors: [(String, CBORValue)] = [
    ("00", .unsigned(0)),
    ("01", .unsigned(1)),
    ("0a", .unsigned(10)),
    ("17", .unsigned(23)),
    ("1818", .unsigned(24)),
    ("1819", .unsigned(25)),
    ("1864", .unsigned(100)),
    ("1903e8", .unsigned(1000)),
    ("1a000f4240", .unsigned(1_000_000)),
    ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
    ("1bffffffffffffffff", .unsigned(18_446_744_073_709_551_615)),
    ("3bffffffffffffffff", .negative(18_446_744_073_709_551_615)),
    ("20", .negative(0)),
    ("29", .negative(9)),
    ("3863", .negative(99)),
    ("3903e7", .negative(999)),
    ("f90000", .float16(0.0)),
    ("f98000", .float16(-0.0)),
    ("f93c00", .float16(1.0)),
    ("fb3ff199999999999a", .float64(1.1)),
    ("f93e00", .float16(1.5)),
    ("f97bff", .float16(65504.0)),
    ("fa47c35000", .float32(100_000.0)),
    ("fa7f7fffff", .float32(3.4028234663852886e+38)),
    ("fb7e37e43c8800759c", .float64(1.0e+300)),
    ("f90001", .float16(5.960464477539063e-8)),
    ("f90400", .float16(0.00006103515625)),
    ("f9c400", .float16(-4.0)),
    ("fbc010666666666666", .float64(-4.1)),
    ("f97c00", .float16(.infinity)),
    ("f97e00", .float16(.nan)),
    ("f9fc00", .float16(-.infinity)),
    ("fa7f800000", .float32(.infinity)),
    ("fa7fc00000", .float32(.nan)),
    ("faff800000", .float32(-.infinity)),
    ("fb7ff0000000000000", .float64(.infinity)),
    ("fb7ff8000000000000", .float64(.nan)),
    ("fbfff0000000000000", .float64(-.infinity)),
    ("fb0000000000000000", .float64(0.0)),
    ("f4", .bool(false)),
    ("f5", .bool(true)),
    ("f6", .null),
    ("f7", .undefined),
    ("f0", .simple(16)),
    ("f8ff", .simple(255)),
    ("c074323031332d30332d32315432303a30343a30305a", .tagged(0, text("2013-03-21T20:04:00Z"))),
    ("c11a514b67b0", .tagged(1, .unsigned(1_363_896_240))),
    ("c1fb41d452d9ec200000", .tagged(1, .float64(1_363_896_240.5))),
    ("d74401020304", .tagged(23, .bytes([1, 2, 3, 4]))),
    ("d818456449455446", .tagged(24, .bytes([0x64, 0x49, 0x45, 0x54, 0x46]))),
    (
      "d82076687474703a2f2f7777772e6578616d706c652e636f6d",
      .tagged(32, text("http://www.example.com"))
    ),
    ("40", .bytes([])),
    ("4401020304", .bytes([1, 2, 3, 4])),
    ("60", text("")),
    ("6161", text("a")),
    ("6449455446", text("IETF")),
    ("62225c", text("\"\\")),
    ("62c3bc", text("\u{00fc}")),
    ("63e6b0b4", text("\u{6c34}")),
    ("64f0908591", text("\u{10151}")),
    ("80", .array([])),
    ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
    (
      "8301820203820405",
      .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])
    ),
    (
      "98190102030405060708090a0b0c0d0e0f101112131415161718181819",
      .array((1...25).map { .unsigned($0) })
    ),
    ("a0", .map([])),
    (
      "a201020304",
      .map([
        CBORMapEntry(key: .unsigned(1), value: .unsigned(2)), CBORMapEntry(key: .unsigned(3), value: .unsigned(4)),
      ])
    ),
    ("a26161016162820203", .map([entry("a", .unsigned(1)), entry("b", .array([.unsigned(2), .unsigned(3)]))])),
    ("826161a161626163", .array([text("a"), .map([entry("b", text("c"))])])),
    (
      "a56161614161626142616361436164614461656145",
      .map([
        entry("a", text("A")), entry("b", text("B")), entry("c", text("C")), entry("d", text("D")),
        entry("e", text("E")),
      ])
    ),
  ]

  @Test("encode and decode every expressible Appendix A vector with exact bytes")
  func definiteVectors() throws {
    for (hexString, value) in Self.vectors {
      #expect(hex(value.encoded()) == hexString, "encoding \(value)")
      let decoded = try CBORValue(decoding: bytes(hexString))
      #expect(decoded == value, "decoding \(hexString)")
    }
  }

  @Test("indefinite-length Appendix A examples parse and re-encode definite")
  func indefiniteVectors() throws {
    let nested123 = CBORValue.array([
      .unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)]),
    ])
    let cases: [(String, CBORValue)] = [
      ("5f42010243030405ff", .bytes([1, 2, 3, 4, 5])),
      ("7f657374726561646d696e67ff", text("streaming")),
      ("9fff", .array([])),
      ("9f018202039f0405ffff", nested123),
      ("9f01820203820405ff", nested123),
      ("83018202039f0405ff", nested123),
      ("83019f0203ff820405", nested123),
      (
        "9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff",
        .array((1...25).map { .unsigned($0) })
      ),
      ("bf61610161629f0203ffff", .map([entry("a", .unsigned(1)), entry("b", .array([.unsigned(2), .unsigned(3)]))])),
      ("826161bf61626163ff", .array([text("a"), .map([entry("b", text("c"))])])),
      ("bf6346756ef563416d7421ff", .map([entry("Fun", .bool(true)), entry("Amt", .negative(1))])),
      ("5fff", .bytes([])),
      ("7f6060ff", text("")),
    ]
    for (hexString, expected) in cases {
      let decoded = try CBORValue(decoding: bytes(hexString))
      #expect(decoded == expected, "decoding \(hexString)")
      #expect(try CBORValue(decoding: decoded.encoded()) == expected)
    }
    #expect(hex(try CBORValue(decoding: bytes("9f018202039f0405ffff")).encoded()) == "8301820203820405")
  }

  @Test("non-canonical argument widths are accepted and re-encoded shortest")
  func nonCanonicalWidths() throws {
    #expect(try CBORValue(decoding: bytes("1b0000000000000001")) == .unsigned(1))
    #expect(try CBORValue(decoding: bytes("1800")) == .unsigned(0))
    #expect(try CBORValue(decoding: bytes("5a00000002abcd")) == .bytes([0xab, 0xcd]))
    #expect(hex(try CBORValue(decoding: bytes("3a000003e7")).encoded()) == "3903e7")
  }
}

// MARK: - Value model

@Suite("CBORValue model")
struct CBORValueModelTests {
  @Test("equality and hashing compare floats by bit pattern")
  func floatEquality() {
    #expect(CBORValue.float64(.nan) == .float64(.nan))
    #expect(CBORValue.float64(0.0) != .float64(-0.0))
    #expect(CBORValue.float32(1) != .float64(1))
    #expect(CBORValue.unsigned(1) != .negative(1))
    let set: Set<CBORValue> = [.float64(.nan), .float64(.nan), .float16(0), .float16(-0.0)]
    #expect(set.count == 3)
  }

  @Test("simple values that alias other encodings stay well-formed")
  func simpleAliases() throws {
    #expect(hex(CBORValue.simple(20).encoded()) == "f4")
    #expect(hex(CBORValue.simple(23).encoded()) == "f7")
    #expect(hex(CBORValue.simple(24).encoded()) == "f7")
    #expect(hex(CBORValue.simple(31).encoded()) == "f7")
    #expect(hex(CBORValue.simple(32).encoded()) == "f820")
    #expect(try CBORValue(decoding: bytes("f820")) == .simple(32))
  }

  @Test("argument width boundaries use the shortest form")
  func widthBoundaries() throws {
    let cases: [(UInt64, String)] = [
      (23, "17"), (24, "1818"), (255, "18ff"), (256, "190100"), (65535, "19ffff"), (65536, "1a00010000"),
      (4_294_967_295, "1affffffff"), (4_294_967_296, "1b0000000100000000"),
    ]
    for (n, expected) in cases {
      #expect(hex(CBORValue.unsigned(n).encoded()) == expected)
      #expect(hex(CBORValue.negative(n).encoded()) == String(format: "%02x", 0x20 | bytes(expected)[0]) + expected.dropFirst(2))
      #expect(try CBORValue(decoding: bytes(expected)) == .unsigned(n))
    }
    let longText = String(repeating: "x", count: 300)
    #expect(hex(Array(CBORValue.text(longText).encoded().prefix(3))) == "79012c")
    #expect(try CBORValue(decoding: CBORValue.text(longText).encoded()) == .text(longText))
  }

  @Test("every half-precision bit pattern survives float16 → Float → float16")
  func halfRoundTrip() {
    for h in 0...UInt16.max {
      let f = CBORHalf.float(from: h)
      let back = CBORHalf.bits(from: f)
      if f.isNaN {
        #expect(back & 0x7c00 == 0x7c00 && back & 0x03ff != 0, "NaN \(h)")
        #expect(back == h, "NaN payload \(h)")
      } else if back != h {
        Issue.record("half \(h) came back as \(back)")
      }
    }
  }

  @Test("Float → half rounds to nearest, ties to even, with overflow and underflow")
  func halfRounding() {
    #expect(CBORHalf.bits(from: 65504) == 0x7bff)
    #expect(CBORHalf.bits(from: 65519.99) == 0x7bff)
    #expect(CBORHalf.bits(from: 65520) == 0x7c00)
    #expect(CBORHalf.bits(from: 1e10) == 0x7c00)
    #expect(CBORHalf.bits(from: -1e10) == 0xfc00)
    #expect(CBORHalf.bits(from: 1 + 0x1p-11) == 0x3c00)
    #expect(CBORHalf.bits(from: 1 + 3 * 0x1p-11) == 0x3c02)
    #expect(CBORHalf.bits(from: 1 + 0x1p-11 + 0x1p-20) == 0x3c01)
    #expect(CBORHalf.bits(from: 0x1p-25) == 0x0000)
    #expect(CBORHalf.bits(from: 0x1.01p-25) == 0x0001)
    #expect(CBORHalf.bits(from: 0x1p-24) == 0x0001)
    #expect(CBORHalf.bits(from: 3 * 0x1p-25) == 0x0002)
    #expect(CBORHalf.bits(from: 0x1.ffcp-15) == 0x0400)
    #expect(CBORHalf.bits(from: .leastNonzeroMagnitude) == 0)
    #expect(CBORHalf.bits(from: -0.0) == 0x8000)
    #expect(hex(CBORValue.float16(0.1).encoded()) == "f92e66")
  }

  @Test("the UTF-8 validator agrees with the standard library on 100,000 tricky byte strings")
  func utf8Differential() {
    let alphabet: [UInt8] = [
      0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed,
      0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xff,
    ]
    var rng = SplitMix64(seed: 0x07F8)
    for _ in 0..<100_000 {
      let length = Int.random(in: 0...12, using: &rng)
      var input = (0..<length).map { _ in alphabet.randomElement(using: &rng)! }
      if Bool.random(using: &rng) { input = Array("abcdefghij".utf8) + input }
      // Valid UTF-8 is exactly what decodes without repair.
      let valid = Array(String(decoding: input, as: UTF8.self).utf8) == input
      let bad = input.withUnsafeBufferPointer { CBORUTF8.firstInvalidByte($0) }
      #expect((bad == nil) == valid, "\(hex(input))")
      if let bad {
        let prefix = Array(input[..<bad])
        #expect(Array(String(decoding: prefix, as: UTF8.self).utf8) == prefix, "\(hex(input)) at \(bad)")
      }
      let encoded = CBORValue.bytes(input).encoded()
      var asText = encoded
      asText[0] += 0x20  // same length, major type 3
      #expect(((try? CBORValue(decoding: asText)) != nil) == valid)
    }
  }

  @Test("parsing works from Data, arrays, non-contiguous collections and raw buffers")
  func inputKinds() throws {
    let encoded = bytes("a26161016162820203")
    let expected = try CBORValue(decoding: encoded)
    #expect(try CBORValue(decoding: Data(encoded)) == expected)
    #expect(try CBORValue(decoding: encoded[...]) == expected)
    #expect(try CBORValue(decoding: encoded.lazy.map { $0 }) == expected)
    #expect(try encoded.withUnsafeBytes { try CBORValue(decoding: $0) } == expected)
    let sliceBytes = [0xff] + encoded + [0xff]
    #expect(try CBORValue(decoding: sliceBytes[1..<(sliceBytes.count - 1)]) == expected)
  }
}

// MARK: - Encoder format

@Suite("CBOREncoder format")
struct CBOREncoderFormatTests {
  struct AB: Codable, Equatable {
    var a: Int
    var b: [Int]
  }

  @Test("Codable output matches the documented on-disk format")
  func exactBytes() throws {
    let encoder = CBOREncoder()
    #expect(hex(try encoder.encode(1000)) == "1903e8")
    #expect(hex(try encoder.encode(-1000)) == "3903e7")
    #expect(hex(try encoder.encode(Int8(-128))) == "387f")
    #expect(hex(try encoder.encode(UInt64.max)) == "1bffffffffffffffff")
    #expect(hex(try encoder.encode(Int64.min)) == "3b7fffffffffffffff")
    #expect(hex(try encoder.encode(1.1)) == "fb3ff199999999999a")
    #expect(hex(try encoder.encode(1.0)) == "fb3ff0000000000000")
    #expect(hex(try encoder.encode(-0.0)) == "fb8000000000000000")
    #expect(hex(try encoder.encode(Float(1.5))) == "fa3fc00000")
    #expect(hex(try encoder.encode(true)) == "f5")
    #expect(hex(try encoder.encode(Int?.none)) == "f6")
    #expect(hex(try encoder.encode("IETF")) == "6449455446")
    #expect(hex(try encoder.encode([1, 2])) == "820102")
    #expect(hex(try encoder.encode(AB(a: 1, b: [2, 3]))) == "a26161016162820203")
    #expect(hex(try encoder.encode(Data([1, 2, 3, 4]))) == "4401020304")
    #expect(hex(try encoder.encode(Date(timeIntervalSince1970: 1_363_896_240.5))) == "c1fb41d452d9ec200000")
    #expect(
      hex(try encoder.encode(UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!))
        == "d825506ba7b8109dad11d180b400c04fd430c8")
    #expect(
      hex(try encoder.encode(URL(string: "http://www.example.com")!))
        == "d82076687474703a2f2f7777772e6578616d706c652e636f6d")
    #expect(hex(try encoder.encode([String: Int]())) == "a0")
    #expect(hex(try encoder.encode(["k": Data()])) == "a1616b40")
  }

  @Test("keyed containers keep encoding order and replace re-encoded keys in place")
  func keyOrderAndReplacement() throws {
    struct Twice: Encodable {
      var count: Int
      enum CodingKeys: String, CodingKey { case z, a, m }
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(1, forKey: .z)
        try c.encode(2, forKey: .a)
        try c.encode(3, forKey: .m)
        try c.encode(count, forKey: .z)
      }
    }
    #expect(hex(try CBOREncoder().encode(Twice(count: 9))) == "a3617a09616102616d03")

    struct Many: Encodable {
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CBORKey.self)
        for i in 0..<40 { try c.encode(i, forKey: CBORKey(stringValue: "k\(i)")) }
        for i in 0..<40 where i % 3 == 0 { try c.encode(-i, forKey: CBORKey(stringValue: "k\(i)")) }
      }
    }
    guard case .map(let entries) = try CBORValue(decoding: CBOREncoder().encode(Many())) else {
      Issue.record("expected a map")
      return
    }
    #expect(entries.count == 40)
    for (i, e) in entries.enumerated() {
      #expect(e.key == .text("k\(i)"))
      #expect(e.value == (i % 3 == 0 ? CBORValue.integer(Int64(-i)) : .unsigned(UInt64(i))))
    }
  }

  @Test("superEncoder writes a \"super\" entry and classes round-trip")
  func superCoding() throws {
    let dog = CBORTestDog(name: "Rex", goodBoy: true)
    let encoded = try CBOREncoder().encode(dog)
    #expect(
      try CBORValue(decoding: encoded)
        == .map([entry("goodBoy", .bool(true)), entry("super", .map([entry("name", text("Rex"))]))]))
    #expect(try CBORDecoder().decode(CBORTestDog.self, from: encoded) == dog)
  }

  @Test("a value that encodes nothing becomes an empty map")
  func emptyEncodable() throws {
    struct Nothing: Codable, Equatable {}
    #expect(hex(try CBOREncoder().encode(Nothing())) == "a0")
    #expect(hex(try CBOREncoder().encode([Nothing()])) == "81a0")
    #expect(try CBORDecoder().decode([Nothing].self, from: bytes("81a0")) == [Nothing()])
  }
}

// MARK: - Round trips

@Suite("CBOR Codable round trips")
struct CBORRoundTripTests {
  private func roundTrip<T: Codable>(_ value: T) throws -> T {
    try CBORDecoder().decode(T.self, from: CBOREncoder().encode(value))
  }

  @Test("a nested model with every supported kind of field round-trips")
  func model() throws {
    let model = CBORTestModel.sample(depth: 2)
    let encoded = try CBOREncoder().encode(model)
    let decoded = try CBORDecoder().decode(CBORTestModel.self, from: encoded)
    #expect(decoded == model)
    let viaBuffer = try encoded.withUnsafeBytes { try CBORDecoder().decode(CBORTestModel.self, from: $0) }
    #expect(viaBuffer == model)
    #expect(try CBORDecoder().decode(CBORTestModel.self, from: Data(encoded)) == model)
  }

  @Test("enums with associated values use nested keyed containers")
  func enums() throws {
    let shapes: [CBORTestShape] = [.circle(radius: 1), .rect(2, 3), .point, .labelled(name: "x", tags: ["y"])]
    #expect(try roundTrip(shapes) == shapes)
    let value = try CBORValue(decoding: CBOREncoder().encode(CBORTestShape.rect(2, 3)))
    #expect(value == .map([entry("rect", .map([entry("_0", .float64(2)), entry("_1", .float64(3))]))]))
  }

  @Test("integers at every width's min and max round-trip")
  func integerLimits() throws {
    #expect(try roundTrip(CBORTestInts.min) == .min)
    #expect(try roundTrip(CBORTestInts.max) == .max)
    #expect(try roundTrip([Int64.min, -1, 0, 1, Int64.max]) == [Int64.min, -1, 0, 1, Int64.max])
    #expect(try roundTrip([UInt8.min, UInt8.max]) == [0, 255])
  }

  @Test("floats round-trip bit-exactly at their edge values")
  func floatEdges() throws {
    let doubles: [Double] = [
      0, -0.0, 1, -1, .pi, .infinity, -.infinity, .nan, -.nan, Double(nan: 0x1234, signaling: false),
      .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
      .leastNormalMagnitude, .leastNormalMagnitude.nextDown, .ulpOfOne, 1e-300, 0.1,
    ]
    let floats: [Float] = [
      0, -0.0, 1, .pi, .infinity, -.infinity, .nan, Float(nan: 0x55, signaling: false),
      .greatestFiniteMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
      .leastNormalMagnitude.nextDown, .ulpOfOne, 0.1,
    ]
    let value = CBORTestFloats(doubles: doubles, floats: floats, single: -0.0, singleFloat: .leastNonzeroMagnitude)
    let decoded = try roundTrip(value)
    #expect(decoded.doubles.map(\.bitPattern) == doubles.map(\.bitPattern))
    #expect(decoded.floats.map(\.bitPattern) == floats.map(\.bitPattern))
    #expect(decoded.single.bitPattern == (-0.0 as Double).bitPattern)
    #expect(decoded.singleFloat.bitPattern == Float.leastNonzeroMagnitude.bitPattern)
    for d in doubles {
      #expect(try CBOREncoder().encode(d).count == 9)
      #expect(try roundTrip(d).bitPattern == d.bitPattern)
    }
    for f in floats {
      #expect(try CBOREncoder().encode(f).count == 5)
      #expect(try roundTrip(f).bitPattern == f.bitPattern)
    }
  }

  @Test("Double and Float accept narrower floats and exact integers, reject inexact values")
  func numericWidening() throws {
    let decoder = CBORDecoder()
    #expect(try decoder.decode(Double.self, from: bytes("f93e00")) == 1.5)
    #expect(try decoder.decode(Double.self, from: bytes("fa47c35000")) == 100_000)
    #expect(try decoder.decode(Double.self, from: bytes("1903e8")) == 1000)
    #expect(try decoder.decode(Double.self, from: bytes("3bffffffffffffffff")) == -0x1p64)
    #expect(try decoder.decode(Double.self, from: bytes("1b0020000000000000")) == 0x1p53)
    #expect(throws: DecodingError.self) { try decoder.decode(Double.self, from: bytes("1b0020000000000001")) }
    #expect(try decoder.decode(Float.self, from: bytes("fb3ff8000000000000")) == 1.5)
    #expect(try decoder.decode(Float.self, from: bytes("fb7ff8000000000000")).isNaN)
    #expect(try decoder.decode(Float.self, from: bytes("fb7ff0000000000000")) == .infinity)
    #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: bytes("fb3ff199999999999a")) }
    #expect(try decoder.decode(Int.self, from: bytes("f94000")) == 2)
    #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: bytes("f93e00")) }
    #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: bytes("f97e00")) }
  }

  @Test("Date round-trips exactly, including values float64-since-1970 cannot hold")
  func dates() throws {
    var rng = SplitMix64(seed: 0xDA7E)
    var dates: [Date] = [
      Date(), Date.distantPast, Date.distantFuture, Date(timeIntervalSince1970: 0),
      Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -0.0),
      Date(timeIntervalSinceReferenceDate: 1e-3), Date(timeIntervalSinceReferenceDate: 1e-20),
      Date(timeIntervalSinceReferenceDate: -1.5), Date(timeIntervalSinceReferenceDate: 7e8.nextUp),
      Date(timeIntervalSinceReferenceDate: 1e15 + 0.5), Date(timeIntervalSinceReferenceDate: 2e15.nextUp),
      Date(timeIntervalSinceReferenceDate: -1e12.nextDown), Date(timeIntervalSinceReferenceDate: .leastNonzeroMagnitude),
      Date(timeIntervalSinceReferenceDate: -.leastNormalMagnitude), Date(timeIntervalSinceReferenceDate: 0x1p70 + 0x1p18),
      Date(timeIntervalSinceReferenceDate: -0x1.fffffffffffffp62), Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude),
      Date(timeIntervalSinceReferenceDate: -.greatestFiniteMagnitude), Date(timeIntervalSinceReferenceDate: .infinity),
      Date(timeIntervalSinceReferenceDate: -978_307_200), Date(timeIntervalSinceReferenceDate: -978_307_200.000_000_1),
    ]
    for _ in 0..<3_000 {
      dates.append(Date(timeIntervalSinceReferenceDate: randomDouble(exponents: -40...40, &rng)))
    }
    for _ in 0..<1_000 {
      dates.append(Date(timeIntervalSinceReferenceDate: randomDouble(exponents: -1074...1023, &rng)))
    }
    var forms: [String: Int] = [:]
    for date in dates {
      let encoded = try CBOREncoder().encode(date)
      switch try CBORValue(decoding: encoded) {
      case .tagged(1, .float64): forms["tag 1", default: 0] += 1
      case .tagged(1001, .map(let entries)):
        guard entries.count == 1, case .array(let pair) = entries[0].value, pair.count == 2 else {
          Issue.record("unexpected tag 1001 layout")
          continue
        }
        if case .tagged = pair[1] {
          forms["bignum", default: 0] += 1
        } else {
          forms["integer", default: 0] += 1
        }
      default: Issue.record("unexpected date encoding \(hex(encoded))")
      }
      let decoded = try CBORDecoder().decode(Date.self, from: encoded)
      #expect(
        decoded.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern
          || (decoded.timeIntervalSinceReferenceDate == 0 && date.timeIntervalSinceReferenceDate == 0),
        "\(date.timeIntervalSinceReferenceDate) came back as \(decoded.timeIntervalSinceReferenceDate)")
    }
    #expect(forms["tag 1", default: 0] > 100)
    #expect(forms["integer", default: 0] > 100)
    #expect(forms["bignum", default: 0] > 100)

    // A date with sub-2^-32 s detail next to 2001 needs a bignum mantissa.
    let milli = try CBORValue(decoding: CBOREncoder().encode(Date(timeIntervalSinceReferenceDate: 0.001)))
    guard case .tagged(1001, .map(let entries)) = milli, case .array(let pair) = entries.first?.value,
      case .negative = pair.first, case .tagged(2, .bytes) = pair.last
    else {
      Issue.record("unexpected encoding \(milli)")
      return
    }
    #expect(entries.first?.key == .unsigned(5))
  }

  @Test("Date decoding accepts tag 1 integers, untagged numbers and RFC 9581 extended time")
  func dateForms() throws {
    let decoder = CBORDecoder()
    let expected = Date(timeIntervalSince1970: 1_363_896_240)
    #expect(try decoder.decode(Date.self, from: bytes("c11a514b67b0")) == expected)
    #expect(try decoder.decode(Date.self, from: bytes("1a514b67b0")) == expected)
    #expect(try decoder.decode(Date.self, from: bytes("fb41d452d9ec000000")) == expected)
    #expect(try decoder.decode(Date.self, from: bytes("d903e9a1011a514b67b0")) == expected)
    // {5: [-1, 2727792481]} = 1363896240.5 s, with an elective key -1 ignored.
    #expect(
      try decoder.decode(Date.self, from: bytes("d903e9a20582201aa296cf612001"))
        == Date(timeIntervalSince1970: 1_363_896_240.5))
    #expect(throws: DecodingError.self) { try decoder.decode(Date.self, from: bytes("c16161")) }
    #expect(throws: DecodingError.self) { try decoder.decode(Date.self, from: bytes("d903e9a10a01")) }
  }

  @Test("UUID and URL accept their tags and bare forms")
  func uuidAndURL() throws {
    let decoder = CBORDecoder()
    let uuid = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!
    #expect(try decoder.decode(UUID.self, from: bytes("506ba7b8109dad11d180b400c04fd430c8")) == uuid)
    #expect(try decoder.decode(UUID.self, from: CBORValue.text(uuid.uuidString).encoded()) == uuid)
    #expect(throws: DecodingError.self) { try decoder.decode(UUID.self, from: bytes("d82543010203")) }
    let url = URL(string: "http://www.example.com")!
    #expect(try decoder.decode(URL.self, from: bytes("76687474703a2f2f7777772e6578616d706c652e636f6d")) == url)
    #expect(try CBORDecoder().decode(UUID.self, from: CBOREncoder().encode(uuid)) == uuid)
    #expect(try CBORDecoder().decode(URL.self, from: CBOREncoder().encode(url)) == url)
  }

  @Test("Data, Date, UUID and URL get their CBOR forms in every container kind")
  func specialTypesEverywhere() throws {
    struct Wrapped: Codable, Equatable {
      var date: Date
      init(date: Date) { self.date = date }
      init(from decoder: any Decoder) throws { date = try decoder.singleValueContainer().decode(Date.self) }
      func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(date)
      }
    }
    struct Mixed: Codable, Equatable {
      var dates: [Date]
      var ids: [UUID]
      var links: [URL]
      var blobs: [Data]
      var maybeDate: Date?
      var wrapped: Wrapped
      var byName: [String: UUID]
    }
    let date = Date(timeIntervalSince1970: 1_363_896_240.5)
    let id = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!
    let link = URL(string: "http://www.example.com")!
    let value = Mixed(
      dates: [date], ids: [id], links: [link], blobs: [Data([1, 2, 3, 4])], maybeDate: date, wrapped: Wrapped(date: date),
      byName: ["x": id])
    let encoded = try CBOREncoder().encode(value)
    let dateValue = CBORValue.tagged(1, .float64(1_363_896_240.5))
    let idValue = try CBORValue(decoding: bytes("d825506ba7b8109dad11d180b400c04fd430c8"))
    #expect(
      try CBORValue(decoding: encoded)
        == .map([
          entry("dates", .array([dateValue])),
          entry("ids", .array([idValue])),
          entry("links", .array([.tagged(32, text("http://www.example.com"))])),
          entry("blobs", .array([.bytes([1, 2, 3, 4])])),
          entry("maybeDate", dateValue),
          entry("wrapped", dateValue),
          entry("byName", .map([entry("x", idValue)])),
        ]))
    #expect(try CBORDecoder().decode(Mixed.self, from: encoded) == value)
    #expect(try CBORDecoder().decode(Wrapped.self, from: dateValue.encoded()) == Wrapped(date: date))
  }

  @Test("optionals round-trip in every position Codable can express")
  func optionals() throws {
    struct Opt: Codable, Equatable {
      var plain: Int?
      var nested: Int??
      var list: [Int?]
      var nestedList: [Int??]
      var dict: [String: Int?]
    }
    let full = Opt(plain: 1, nested: .some(.some(2)), list: [nil, 3], nestedList: [.some(.some(4)), .none], dict: ["a": nil, "b": 5])
    #expect(try roundTrip(full) == full)
    let empty = Opt(plain: nil, nested: .none, list: [], nestedList: [], dict: [:])
    #expect(try roundTrip(empty) == empty)
    // `.some(.none)` is encoded as null, which Codable can only read back as `.none`.
    let inner = Opt(plain: nil, nested: .some(.none), list: [], nestedList: [.some(.none)], dict: [:])
    let decoded = try roundTrip(inner)
    #expect(decoded.nested == .none)
    #expect(decoded.nestedList == [.none])
    #expect(try roundTrip(Int??.some(.some(3))) == .some(.some(3)))
    #expect(hex(try CBOREncoder().encode(empty)) == "a3646c697374806a6e65737465644c697374806464696374a0")
  }

  @Test("dictionaries with String and Int keys, small and large, round-trip")
  func dictionaries() throws {
    var big: [String: Int] = [:]
    var bigInt: [Int: String] = [:]
    for i in 0..<500 {
      big["key\(i)"] = i
      bigInt[i - 250] = "v\(i)"
    }
    #expect(try roundTrip(big) == big)
    #expect(try roundTrip(bigInt) == bigInt)
    #expect(try roundTrip([1: "a"]) == [1: "a"])
    // Int-keyed dictionaries are written with text keys; integer keys are accepted too.
    #expect(hex(try CBOREncoder().encode([7: true])) == "a16137f5")
    #expect(try CBORDecoder().decode([Int: Bool].self, from: bytes("a107f5")) == [7: true])
    #expect(try CBORDecoder().decode([Int: Bool].self, from: bytes("a126f5")) == [-7: true])
    #expect(try CBORDecoder().decode([String: Bool].self, from: bytes("a107f5")) == ["7": true])
  }

  @Test("integer map keys match CodingKey.intValue or decimal text, in small and large maps")
  func integerKeys() throws {
    struct IntKeyed: Codable, Equatable {
      var first: String
      var second: String
      enum CodingKeys: Int, CodingKey {
        case first = 1
        case second = -2
      }
    }
    struct TextKeyed: Codable, Equatable {
      var one: Int
      enum CodingKeys: String, CodingKey { case one = "1" }
    }
    let small: CBORValue = .map([
      CBORMapEntry(key: .unsigned(1), value: text("a")), CBORMapEntry(key: .negative(1), value: text("b")),
    ])
    #expect(try CBORDecoder().decode(IntKeyed.self, from: small.encoded()) == IntKeyed(first: "a", second: "b"))
    var entries = (100..<130).map { CBORMapEntry(key: .unsigned(UInt64($0)), value: text("x\($0)")) }
    entries += small.mapEntries
    let large = CBORValue.map(entries)
    #expect(try CBORDecoder().decode(IntKeyed.self, from: large.encoded()) == IntKeyed(first: "a", second: "b"))
    #expect(
      try CBORDecoder().decode(TextKeyed.self, from: CBORValue.map([CBORMapEntry(key: .unsigned(1), value: .unsigned(5))]).encoded())
        == TextKeyed(one: 5))
    let largeText = CBORValue.map(entries + [CBORMapEntry(key: .unsigned(1), value: .unsigned(6))])
    // The first matching entry wins in both the linear and the indexed lookup.
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(TextKeyed.self, from: largeText.encoded()) }
    #expect(try CBORDecoder().decode(IntKeyed.self, from: largeText.encoded()) == IntKeyed(first: "a", second: "b"))
  }

  @Test("Decimal, Data, unicode and empty containers round-trip")
  func miscellaneous() throws {
    let decimals = [Decimal(0), Decimal(string: "3.14159265358979323846")!, Decimal(string: "-1e-20")!, Decimal.greatestFiniteMagnitude]
    #expect(try roundTrip(decimals) == decimals)
    #expect(try roundTrip(Data()) == Data())
    #expect(try roundTrip(Data(repeating: 0xab, count: 70_000)) == Data(repeating: 0xab, count: 70_000))
    let strings = ["", "\u{0}", "🙂", "ü水", "\u{10FFFF}", String(repeating: "é", count: 1000)]
    #expect(try roundTrip(strings) == strings)
    #expect(try roundTrip([[Int]]()) == [])
    #expect(try roundTrip([[Int]]([[]])) == [[]])
    #expect(try roundTrip([String: [String: Int]]()) == [:])
  }

  @Test("parse → encode → parse is the identity for deterministic input")
  func valueIdentity() throws {
    let encoded = try CBOREncoder().encode(CBORTestModel.sample(depth: 1))
    let value = try CBORValue(decoding: encoded)
    #expect(value.encoded() == encoded)
  }
}

extension CBORValue {
  fileprivate var mapEntries: [CBORMapEntry] {
    if case .map(let entries) = self { return entries }
    return []
  }
}

// MARK: - Decoding errors

@Suite("CBOR decoding errors")
struct CBORDecodingErrorTests {
  struct Leaf: Codable {
    var name: String
    var small: Int8
  }

  struct Root: Codable {
    var items: [Leaf]
    var extra: Int?
  }

  private func decodingError<T: Decodable>(_ type: T.Type, _ value: CBORValue) -> DecodingError? {
    do {
      _ = try CBORDecoder().decode(type, from: value.encoded())
      Issue.record("expected a DecodingError")
      return nil
    } catch let error as DecodingError {
      return error
    } catch {
      Issue.record("unexpected error \(error)")
      return nil
    }
  }

  private func leaf(_ name: CBORValue, _ small: CBORValue) -> CBORValue {
    .map([entry("name", name), entry("small", small)])
  }

  @Test("type mismatch reports the full coding path")
  func typeMismatch() {
    let value = CBORValue.map([entry("items", .array([leaf(text("a"), .unsigned(1)), leaf(.unsigned(5), .unsigned(2))]))])
    guard case .typeMismatch(let type, let context)? = decodingError(Root.self, value) else {
      Issue.record("expected typeMismatch")
      return
    }
    #expect(ObjectIdentifier(type) == ObjectIdentifier(String.self))
    #expect(pathStrings(context.codingPath) == ["items", "#1", "name"])
  }

  @Test("missing key reports the key and the container's path")
  func keyNotFound() {
    let value = CBORValue.map([entry("items", .array([.map([entry("name", text("a"))])]))])
    guard case .keyNotFound(let key, let context)? = decodingError(Root.self, value) else {
      Issue.record("expected keyNotFound")
      return
    }
    #expect(key.stringValue == "small")
    #expect(pathStrings(context.codingPath) == ["items", "#0"])
  }

  @Test("integer overflow into Int8 is dataCorrupted, never a trap")
  func overflow() throws {
    for bad in [CBORValue.unsigned(128), .unsigned(300), .negative(128), .unsigned(.max), .negative(.max)] {
      let value = CBORValue.map([entry("items", .array([leaf(text("a"), bad)]))])
      guard case .dataCorrupted(let context)? = decodingError(Root.self, value) else {
        Issue.record("expected dataCorrupted for \(bad)")
        continue
      }
      #expect(pathStrings(context.codingPath) == ["items", "#0", "small"])
    }
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(UInt8.self, from: bytes("20")) }
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(Int64.self, from: bytes("1bffffffffffffffff")) }
    #expect(throws: DecodingError.self) { try CBORDecoder().decode(Int64.self, from: bytes("3b8000000000000000")) }
    #expect(try CBORDecoder().decode(Int64.self, from: bytes("3b7fffffffffffffff")) == .min)
    #expect(try CBORDecoder().decode(UInt64.self, from: bytes("1bffffffffffffffff")) == .max)
    #expect(try CBORDecoder().decode([Int8].self, from: bytes("82387f187f")) == [-128, 127])
    #expect(throws: DecodingError.self) { try CBORDecoder().decode([UInt16].self, from: bytes("82001a00010000")) }
  }

  @Test("null for a non-optional is valueNotFound; a short array reports its index")
  func valueNotFound() {
    let value = CBORValue.map([entry("items", .array([leaf(.null, .unsigned(1))]))])
    guard case .valueNotFound(_, let context)? = decodingError(Root.self, value) else {
      Issue.record("expected valueNotFound")
      return
    }
    #expect(pathStrings(context.codingPath) == ["items", "#0", "name"])

    struct Pair: Decodable {
      var a: Int
      var b: Int
      init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        a = try c.decode(Int.self)
        b = try c.decode(Int.self)
      }
    }
    guard case .valueNotFound(_, let context2)? = decodingError(Pair.self, .array([.unsigned(1)])) else {
      Issue.record("expected valueNotFound at end of array")
      return
    }
    #expect(pathStrings(context2.codingPath) == ["#1"])
  }

  @Test("containers of the wrong kind are type mismatches")
  func wrongContainers() {
    guard case .typeMismatch(_, let context)? = decodingError(Root.self, .map([entry("items", .map([]))])) else {
      Issue.record("expected typeMismatch")
      return
    }
    #expect(pathStrings(context.codingPath) == ["items"])
    guard case .typeMismatch? = decodingError(Leaf.self, .array([])) else {
      Issue.record("expected typeMismatch")
      return
    }
    guard case .valueNotFound? = decodingError(Leaf.self, .null) else {
      Issue.record("expected valueNotFound")
      return
    }
  }

  @Test("malformed bytes surface as CBORError, not DecodingError")
  func malformedThroughDecoder() {
    #expect(throws: CBORError(offset: 0, reason: "truncated: text string of 40 bytes needs 40, 12 remain")) {
      try CBORDecoder().decode(String.self, from: bytes("7828") + Array(repeating: 0x61, count: 12))
    }
  }
}

// MARK: - Malformed input

@Suite("CBOR malformed input")
struct CBORMalformedTests {
  @Test("every proper prefix of a valid document throws CBORError")
  func truncation() throws {
    var documents: [[UInt8]] = CBORAppendixATests.vectors.map { bytes($0.0) }
    documents.append(try CBOREncoder().encode(CBORTestModel.sample(depth: 1)))
    documents.append(bytes("bf61610161629f0203ffff"))
    documents.append(bytes("7f657374726561646d696e67ff"))
    var checked = 0
    for document in documents {
      for length in 0..<document.count {
        let prefix = Array(document[..<length])
        #expect(throws: CBORError.self) { try CBORValue(decoding: prefix) }
        #expect(throws: CBORError.self) { try CBORDecoder().decode(CBORTestModel.self, from: prefix) }
        checked += 1
      }
    }
    #expect(checked > 1_000)
  }

  @Test("the deepest documents the parser accepts decode, render and re-encode")
  func deepButValid() throws {
    // 127 levels of {"k": [ ... ]} is 254 containers: inside the 256 limit.
    var value = CBORValue.map([entry("a", .unsigned(1))])
    for _ in 0..<126 { value = .map([entry("k", .array([value]))]) }
    let encoded = value.encoded()
    let decoded = try CBORDecoder().decode(CBORFuzzTarget.self, from: encoded)
    #expect(try CBOREncoder().encode(decoded) == encoded)
    #expect(value.jsonText(prettyPrinted: true).count > 127 * 4)
    let tooDeep = CBORValue.map([entry("k", .array([.map([entry("k", .array([value]))])]))])
    #expect(throws: CBORError.self) { try CBORDecoder().decode(CBORFuzzTarget.self, from: tooDeep.encoded()) }
  }

  @Test("huge lengths and counts fail before allocating")
  func hugeLengths() {
    let cases = [
      "5bffffffffffffffff00", "5affffffff00", "7bffffffffffffffff", "7a7fffffff6161",
      "9bffffffffffffffff00", "9a0fffffff00", "bbffffffffffffffff0000", "ba7fffffff0000",
      "b9ffff00", "5f5bffffffffffffffffff",
    ]
    for c in cases {
      guard let error = parseError(c) else {
        Issue.record("\(c) parsed")
        continue
      }
      #expect(error.reason.hasPrefix("truncated"), "\(c): \(error)")
    }
    #expect(parseError("7828" + String(repeating: "61", count: 12)) == CBORError(offset: 0, reason: "truncated: text string of 40 bytes needs 40, 12 remain"))
    #expect(parseError("a2616101") == CBORError(offset: 0, reason: "truncated: map of 2 pairs needs at least 2 bytes per pair, 3 remain"))
  }

  @Test("nesting is limited to 256 levels")
  func depth() {
    let ok = String(repeating: "81", count: 256) + "00"
    #expect(parseError(ok) == nil)
    #expect(parseError(String(repeating: "81", count: 257) + "00")?.reason == "nesting deeper than 256")
    let tooDeep = String(repeating: "81", count: 300) + "00"
    #expect(parseError(tooDeep) == CBORError(offset: 256, reason: "nesting deeper than 256"))
    #expect(parseError(String(repeating: "9f", count: 300))?.reason == "nesting deeper than 256")
    #expect(parseError(String(repeating: "a1", count: 300))?.reason == "nesting deeper than 256")
    #expect(parseError(String(repeating: "c1", count: 300) + "00")?.reason == "nesting deeper than 256")
    #expect(parseError(String(repeating: "a100", count: 300) + "00")?.reason == "nesting deeper than 256")
  }

  @Test("invalid UTF-8 is rejected with the offset of the bad byte")
  func invalidUTF8() {
    let cases: [(String, Int)] = [
      ("62c328", 1),  // bad continuation
      ("61ff", 1),  // never valid
      ("6180", 1),  // lone continuation
      ("63eda080", 1),  // surrogate U+D800
      ("62c080", 1),  // overlong NUL
      ("63e08080", 1),  // overlong 3-byte
      ("64f08080 80", 1),  // overlong 4-byte
      ("64f4908080", 1),  // above U+10FFFF
      ("6361e6b0", 2),  // truncated sequence at the end
      ("7f61c361bcff", 2),  // a chunk may not split a character
      ("826161636162ff", 6),  // inside an array
    ]
    for (c, offset) in cases {
      let error = parseError(c)
      #expect(error?.reason == "invalid UTF-8 in text string", "\(c)")
      #expect(error?.offset == offset, "\(c)")
    }
    #expect(parseError("63eea080") == nil)  // U+E800 is fine
    #expect(parseError("64f48fbfbf") == nil)  // U+10FFFF is fine
  }

  @Test("trailing bytes, stray breaks and reserved additional info are errors")
  func structuralErrors() {
    #expect(parseError("0000") == CBORError(offset: 1, reason: "trailing bytes: 1 bytes after the data item"))
    #expect(parseError("ff")?.reason == "unexpected break code outside an indefinite-length item")
    #expect(parseError("81ff")?.offset == 1)
    #expect(parseError("a1ff00")?.offset == 1)
    #expect(parseError("00ff") == CBORError(offset: 1, reason: "trailing bytes: 1 bytes after the data item"))
    for major in 0..<8 {
      for ai in 28...30 {
        let initial = String(format: "%02x", major << 5 | ai)
        #expect(parseError(initial + "0000") == CBORError(offset: 0, reason: "reserved additional info \(ai)"))
      }
    }
    #expect(parseError("1f")?.reason == "indefinite length not allowed for unsigned integer")
    #expect(parseError("3f")?.reason == "indefinite length not allowed for negative integer")
    #expect(parseError("df00")?.reason == "indefinite length not allowed for tag")
    #expect(parseError("f81f")?.reason == "invalid simple value 31 in two-byte form")
    #expect(parseError("")?.offset == 0)
    #expect(parseError("bf6161ff")?.reason == "break code after a map key that has no value")
    #expect(parseError("bf6161")?.reason.hasPrefix("truncated") == true)
    #expect(parseError("9f01")?.reason.hasPrefix("truncated") == true)
  }

  @Test("indefinite strings accept only definite chunks of their own type")
  func indefiniteChunks() {
    #expect(parseError("5f01ff") == CBORError(offset: 1, reason: "non-string chunk (unsigned integer) inside indefinite-length byte string"))
    #expect(parseError("7f4100ff")?.reason == "non-string chunk (byte string) inside indefinite-length text string")
    #expect(parseError("5f5fffff")?.reason == "nested indefinite-length chunk inside indefinite-length byte string")
    #expect(parseError("5f80ff")?.offset == 1)
    #expect(parseError("5f41")?.reason.hasPrefix("truncated") == true)
    #expect(parseError("5f4101")?.reason.hasPrefix("truncated") == true)
  }
}

// MARK: - Fuzzing

@Suite("CBOR fuzzing")
struct CBORFuzzTests {
  private static func seeds() throws -> [[UInt8]] {
    var seeds: [[UInt8]] = CBORAppendixATests.vectors.map { bytes($0.0) }
    seeds += [
      "5f42010243030405ff", "7f657374726561646d696e67ff", "9f018202039f0405ffff", "bf61610161629f0203ffff",
      "d903e9a20582201aa296cf612001", "c1fb41d452d9ec200000",
    ].map { bytes($0) }
    seeds.append(try CBOREncoder().encode(CBORTestModel.sample(depth: 0)))
    let targets = [
      CBORFuzzTarget(a: 1, b: "x", c: [1.5, -0.0], d: ["k": -3], e: .rect(1, 2), f: Data([1]), g: Date(timeIntervalSince1970: 5),
        h: UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"), i: URL(string: "a:b"), j: true,
        k: [CBORFuzzTarget(a: 2, l: 1.25)], l: .nan, m: [1: 2, 3: 4]),
      CBORFuzzTarget(e: .labelled(name: "n", tags: ["t"]), k: []),
      CBORFuzzTarget(c: [], d: [:], e: .point, j: false),
    ]
    for t in targets { seeds.append(try CBOREncoder().encode(t)) }
    return seeds
  }

  private static let interesting: [UInt8] = [
    0x00, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1f, 0x20, 0x3b, 0x40, 0x5b, 0x5f, 0x60, 0x7b, 0x7f, 0x80,
    0x9b, 0x9f, 0xa0, 0xbb, 0xbf, 0xc1, 0xd8, 0xdb, 0xf4, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xff,
  ]

  static func mutate(_ input: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
    var data = input
    let operations = Int.random(in: 1...4, using: &rng)
    for _ in 0..<operations {
      switch Int.random(in: 0..<7, using: &rng) {
      case 0 where !data.isEmpty:  // flip a bit
        let i = Int.random(in: 0..<data.count, using: &rng)
        data[i] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
      case 1 where !data.isEmpty:  // truncate
        data.removeLast(Int.random(in: 1...data.count, using: &rng))
      case 2:  // insert random bytes
        let i = Int.random(in: 0...data.count, using: &rng)
        data.insert(contentsOf: (0..<Int.random(in: 1...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: i)
      case 3 where !data.isEmpty:  // overwrite with an interesting byte
        data[Int.random(in: 0..<data.count, using: &rng)] = interesting.randomElement(using: &rng)!
      case 4 where !data.isEmpty:  // delete a range
        let i = Int.random(in: 0..<data.count, using: &rng)
        data.removeSubrange(i..<min(data.count, i + Int.random(in: 1...4, using: &rng)))
      case 5 where data.count > 1:  // duplicate a slice
        let i = Int.random(in: 0..<data.count, using: &rng)
        let j = min(data.count, i + Int.random(in: 1...16, using: &rng))
        data.insert(contentsOf: data[i..<j], at: Int.random(in: 0...data.count, using: &rng))
      default:  // set a random byte
        if !data.isEmpty { data[Int.random(in: 0..<data.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
      }
    }
    return data
  }

  private static func exercise(_ input: [UInt8], parsed: inout Int) {
    if let value = try? CBORValue(decoding: input) {
      parsed += 1
      _ = value.jsonText()
      _ = value.jsonText(prettyPrinted: true)
      let reencoded = value.encoded()
      if let again = try? CBORValue(decoding: reencoded) {
        if again != value { Issue.record("re-encoding changed \(hex(input))") }
      } else {
        Issue.record("re-encoding of \(hex(input)) does not parse")
      }
    }
    _ = try? CBORDecoder().decode(CBORFuzzTarget.self, from: input)
    _ = try? CBORDecoder().decode(CBORTestModel.self, from: input)
    _ = try? CBORDecoder().decode([String: [Int8]].self, from: input)
  }

  /// 200,000 inputs in total: 160,000 mutations of valid encodings and 40,000 random byte strings.
  @Test("fuzz: 200,000 mutated and random inputs never crash")
  func fuzz() throws {
    let seeds = try Self.seeds()
    var rng = SplitMix64(seed: 0xC0FFEE)
    var total = 0
    var parsed = 0
    for _ in 0..<160_000 {
      let seed = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
      Self.exercise(Self.mutate(seed, &rng), parsed: &parsed)
      total += 1
    }
    for _ in 0..<40_000 {
      let length = Int.random(in: 0...48, using: &rng)
      let input = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
      Self.exercise(input, parsed: &parsed)
      total += 1
    }
    #expect(total == 200_000)
    #expect(parsed > 1_000, "enough mutations stay well-formed to exercise rendering")
  }
}

// MARK: - JSON rendering

@Suite("CBOR JSON rendering")
struct CBORJSONTests {
  static let sample: CBORValue = .map([
    entry("name", text("Ada \"Lovelace\"\\\n\u{1}é")),
    entry("age", .unsigned(36)),
    entry("min", .negative(.max)),
    entry("pi", .float64(3.14159)),
    entry("half", .float16(1.5)),
    entry("single", .float32(0.1)),
    entry("nan", .float64(.nan)),
    entry("inf", .float32(-.infinity)),
    entry("tiny", .float64(.leastNonzeroMagnitude)),
    entry("bytes", .bytes([1, 2, 3, 4])),
    entry("when", .tagged(1, .float64(1_363_896_240.5))),
    entry("id", .tagged(37, .bytes(bytes("6ba7b8109dad11d180b400c04fd430c8")))),
    entry("url", .tagged(32, text("https://example.com/x"))),
    entry("other", .tagged(99, .array([.bool(true), .null, .undefined]))),
    entry("simple", .simple(16)),
    CBORMapEntry(key: .unsigned(1), value: text("int key")),
    CBORMapEntry(key: .bytes([0xff]), value: .negative(0)),
    entry("empty", .array([])),
    entry("emptyMap", .map([])),
  ])

  static let compact =
    #"{"name":"Ada \"Lovelace\"\\\u000a\u0001é","age":36,"min":-18446744073709551616,"pi":3.14159,"half":1.5,"single":0.1,"nan":"NaN","inf":"-Infinity","tiny":5e-324,"bytes":"AQIDBA==","when":"2013-03-21T20:04:00.500Z","id":"6BA7B810-9DAD-11D1-80B4-00C04FD430C8","url":"https://example.com/x","other":{"tag":99,"value":[true,null,null]},"simple":{"simple":16},"1":"int key","/w==":-1,"empty":[],"emptyMap":{}}"#

  static let pretty = #"""
    {
      "name": "Ada \"Lovelace\"\\\u000a\u0001é",
      "age": 36,
      "min": -18446744073709551616,
      "pi": 3.14159,
      "half": 1.5,
      "single": 0.1,
      "nan": "NaN",
      "inf": "-Infinity",
      "tiny": 5e-324,
      "bytes": "AQIDBA==",
      "when": "2013-03-21T20:04:00.500Z",
      "id": "6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
      "url": "https://example.com/x",
      "other": {
        "tag": 99,
        "value": [
          true,
          null,
          null
        ]
      },
      "simple": {
        "simple": 16
      },
      "1": "int key",
      "/w==": -1,
      "empty": [],
      "emptyMap": {}
    }
    """#

  @Test("golden compact and pretty renderings")
  func golden() {
    #expect(Self.sample.jsonText() == Self.compact)
    #expect(Self.sample.jsonText(prettyPrinted: true) == Self.pretty)
  }

  @Test("rendered JSON parses with JSONSerialization")
  func parsesAsJSON() throws {
    for text in [Self.sample.jsonText(), Self.sample.jsonText(prettyPrinted: true)] {
      let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
      #expect(object?["name"] as? String == "Ada \"Lovelace\"\\\n\u{1}é")
      #expect(object?["when"] as? String == "2013-03-21T20:04:00.500Z")
      #expect(object?.count == 19)
    }
    let model = try CBORValue(decoding: CBOREncoder().encode(CBORTestModel.sample(depth: 2)))
    for text in [model.jsonText(), model.jsonText(prettyPrinted: true)] {
      #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) is [String: Any])
    }
    for control in 0..<0x20 {
      let rendered = CBORValue.text(String(UnicodeScalar(UInt8(control)))).jsonText()
      let parsed = try JSONSerialization.jsonObject(with: Data(rendered.utf8), options: .fragmentsAllowed)
      #expect(parsed as? String == String(UnicodeScalar(UInt8(control))))
    }
  }

  @Test("numbers render exactly and floats use the shortest round-trip form")
  func numbers() throws {
    #expect(CBORValue.unsigned(.max).jsonText() == "18446744073709551615")
    #expect(CBORValue.negative(0).jsonText() == "-1")
    #expect(CBORValue.negative(.max - 1).jsonText() == "-18446744073709551615")
    #expect(CBORValue.float64(-0.0).jsonText() == "-0.0")
    #expect(CBORValue.float64(1e300).jsonText() == "1e+300")
    #expect(CBORValue.float64(.greatestFiniteMagnitude).jsonText() == "1.7976931348623157e+308")
    #expect(CBORValue.float16(.infinity).jsonText() == "\"Infinity\"")
    #expect(CBORValue.float16(0.0999755859375).jsonText() == "0.099975586")
    var rng = SplitMix64(seed: 7)
    for _ in 0..<1_000 {
      let d = Double(bitPattern: rng.next())
      guard d.isFinite else { continue }
      let rendered = CBORValue.float64(d).jsonText()
      let parsed = try JSONSerialization.jsonObject(with: Data("[\(rendered)]".utf8)) as? [Any]
      #expect(parsed?.count == 1, "\(rendered)")
      #expect(Double(rendered) == d)
    }
  }

  @Test("dates render as ISO 8601 UTC with fractional seconds")
  func dates() throws {
    func iso(_ seconds: Double) -> String { CBORValue.tagged(1, .float64(seconds)).jsonText() }
    #expect(iso(0) == "\"1970-01-01T00:00:00.000Z\"")
    #expect(iso(-1) == "\"1969-12-31T23:59:59.000Z\"")
    #expect(iso(-0.25) == "\"1969-12-31T23:59:59.750Z\"")
    #expect(iso(951_782_400) == "\"2000-02-29T00:00:00.000Z\"")
    #expect(iso(0.000001) == "\"1970-01-01T00:00:00.000001Z\"")
    #expect(iso(1.000000001) == "\"1970-01-01T00:00:01.000000001Z\"")
    #expect(iso(253_402_300_799.5) == "\"9999-12-31T23:59:59.500Z\"")
    #expect(iso(-62_167_219_200) == "\"0000-01-01T00:00:00.000Z\"")
    #expect(iso(253_402_300_800) == #"{"tag":1,"value":253402300800.0}"#)
    #expect(iso(.nan) == #"{"tag":1,"value":"NaN"}"#)
    #expect(CBORValue.tagged(1, .unsigned(1_363_896_240)).jsonText() == "\"2013-03-21T20:04:00.000Z\"")
    #expect(CBORValue.tagged(1, text("x")).jsonText() == #"{"tag":1,"value":"x"}"#)

    // Dates written by CBOREncoder render the same way in both of its forms (tag 1 and tag 1001).
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    var rng = SplitMix64(seed: 99)
    var sawExtended = false
    for _ in 0..<1_000 {
      let date = Date(timeIntervalSinceReferenceDate: randomDouble(exponents: -30...31, &rng))
      let value = try CBORValue(decoding: CBOREncoder().encode(date))
      if case .tagged(1001, _) = value { sawExtended = true }
      let rendered = value.jsonText()
      // Whole seconds and the fraction are exact relative to 2001, where the Double lives.
      let t = date.timeIntervalSinceReferenceDate
      let whole = t.rounded(.down)
      let expectedPrefix = formatter.string(from: Date(timeIntervalSinceReferenceDate: whole)).dropLast()
      #expect(rendered.dropFirst().hasPrefix(expectedPrefix), "\(rendered) vs \(expectedPrefix)")
      let fraction = Double("0" + rendered.drop(while: { $0 != "." }).dropLast(2)) ?? -1
      #expect(abs(fraction - (t - whole)) <= 0.5e-9, "\(rendered)")
    }
    #expect(sawExtended)
  }

  @Test("UUID, URL and other tags, plus non-text keys")
  func tagsAndKeys() {
    #expect(CBORValue.tagged(37, .bytes([1, 2])).jsonText() == #"{"tag":37,"value":"AQI="}"#)
    #expect(CBORValue.tagged(32, .unsigned(1)).jsonText() == #"{"tag":32,"value":1}"#)
    let keys = CBORValue.map([
      CBORMapEntry(key: .negative(4), value: .null),
      CBORMapEntry(key: .array([.unsigned(1), text("a")]), value: .null),
      CBORMapEntry(key: .float64(1.5), value: .null),
      CBORMapEntry(key: .bool(true), value: .null),
    ])
    #expect(keys.jsonText() == #"{"-5":null,"[1,\"a\"]":null,"1.5":null,"true":null}"#)
    #expect(CBORValue.bytes([]).jsonText() == "\"\"")
    #expect(CBORValue.bytes([0xfb, 0xff]).jsonText() == "\"+/8=\"")
    #expect(CBORValue.undefined.jsonText(prettyPrinted: true) == "null")
    #expect(CBORValue.array([]).jsonText(prettyPrinted: true) == "[]")
  }
}

// MARK: - Streaming paths

/// The encoder and decoder stream (no intermediate tree) and hand unusual
/// shapes to the tree implementations: both paths must agree exactly.
@Suite("CBOR streaming and tree paths agree")
struct CBORStreamingTests {
  /// Encodes with the streaming encoder and the tree encoder; they must write the same bytes.
  private func sameBytes<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    let streamed = try CBOREncoder().encode(value)
    let tree = try CBOREncoder().treeEncode(value)
    #expect(hex(streamed) == hex(tree), sourceLocation: sourceLocation)
    return streamed
  }

  /// Decodes with the streaming decoder and the tree decoder; both must succeed alike or fail alike.
  private func sameDecoding<T: Codable & Equatable>(
    _ type: T.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let streamed = Result { try CBORDecoder().decode(type, from: bytes) }
    let tree = Result { try CBORDecoder().decode(type, fromValue: CBORValue(decoding: bytes)) }
    switch (streamed, tree) {
    case (.success(let a), .success(let b)):
      // Bytes, not ==, so that NaN fields compare equal to themselves.
      #expect(a == b || (try? CBOREncoder().treeEncode(a)) == (try? CBOREncoder().treeEncode(b)), sourceLocation: sourceLocation)
    case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)", sourceLocation: sourceLocation)
    default: Issue.record("streamed \(streamed), tree \(tree)", sourceLocation: sourceLocation)
    }
  }

  @Test("models, enums, optionals, classes and Foundation types encode and decode alike")
  func models() throws {
    let model = CBORTestModel.sample(depth: 3)
    sameDecoding(CBORTestModel.self, try sameBytes(model))
    let dog = CBORTestDog(name: "Rex", goodBoy: true)
    #expect(try CBORDecoder().decode(CBORTestDog.self, from: try sameBytes(dog)) == dog)
    let optionals: [Int?] = [1, nil, 3]
    sameDecoding([Int?].self, try sameBytes(optionals))
    sameDecoding([String: [Int]].self, try sameBytes(["a": [1, 2], "b": []]))
    sameDecoding(Date.self, try sameBytes(Date(timeIntervalSinceReferenceDate: 0.1)))
    sameDecoding([UUID].self, try sameBytes([UUID(), UUID()]))
    sameDecoding(Data.self, try sameBytes(Data([1, 2, 3])))
  }

  @Test("definite headers widen at 24, 256 and 65,536 entries")
  func headerWidths() throws {
    for count in [0, 1, 23, 24, 25, 255, 256, 257, 65_535, 65_536] {
      let array = Array(0..<count)
      sameDecoding([Int].self, try sameBytes(array))
      let dictionary = Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", [$0]) })
      let bytes = try sameBytes(dictionary)
      sameDecoding([String: [Int]].self, bytes)
      #expect(try CBORDecoder().decode([String: [Int]].self, from: bytes) == dictionary)
    }
  }

  @Test("a key encoded twice, interleaved containers and superEncoder fall back to the tree")
  func treeShapes() throws {
    struct Repeats: Encodable {
      var count: Int
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CBORKey.self)
        for i in 0..<count { try c.encode(i, forKey: CBORKey(stringValue: "k\(i % 30)")) }
      }
    }
    for count in [2, 17, 31, 40, 100] { _ = try sameBytes(Repeats(count: count)) }

    struct Interleaved: Encodable {
      enum Keys: String, CodingKey { case a, b, c }
      func encode(to encoder: any Encoder) throws {
        var outer = encoder.container(keyedBy: Keys.self)
        var first = outer.nestedContainer(keyedBy: Keys.self, forKey: .a)
        var list = outer.nestedUnkeyedContainer(forKey: .b)
        try first.encode(1, forKey: .c)
        try list.encode(2)
        try outer.encode(3, forKey: .c)
        try first.encode(4, forKey: .a)
      }
    }
    _ = try sameBytes(Interleaved())

    struct TwoContainers: Encodable {
      enum Keys: String, CodingKey { case a, b }
      func encode(to encoder: any Encoder) throws {
        var one = encoder.container(keyedBy: Keys.self)
        try one.encode(1, forKey: .a)
        var two = encoder.container(keyedBy: Keys.self)
        try two.encode(2, forKey: .b)
      }
    }
    _ = try sameBytes(TwoContainers())

    struct TwoValues: Encodable {
      func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(1)
        try single.encode("two")
      }
    }
    _ = try sameBytes(TwoValues())
    _ = try sameBytes([CBORTestDog(name: "a", goodBoy: false), CBORTestDog(name: "b", goodBoy: true)])
  }

  @Test("an error thrown by encode(to:) reaches the caller on both paths")
  func encodeErrors() throws {
    struct Refuses: Encodable {
      var afterTreeShape: Bool
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CBORKey.self)
        try c.encode(1, forKey: CBORKey(stringValue: "a"))
        if afterTreeShape { try c.encode(2, forKey: CBORKey(stringValue: "a")) }
        throw EncodingError.invalidValue(1, .init(codingPath: [], debugDescription: "refused"))
      }
    }
    for afterTreeShape in [false, true] {
      #expect(throws: EncodingError.self) { try CBOREncoder().encode(Refuses(afterTreeShape: afterTreeShape)) }
    }
  }

  @Test("type mismatches, missing keys and malformed bytes fail alike on both decoders")
  func decodingErrors() throws {
    let model = try CBOREncoder().encode(CBORTestModel.sample())
    sameDecoding(CBORTestInts.self, model)
    sameDecoding([Int].self, model)
    sameDecoding(String.self, model)
    sameDecoding(CBORTestShape.self, model)
    sameDecoding(Int8.self, bytes("190100"))
    sameDecoding([Int8].self, bytes("83010203"))
    sameDecoding([Int8].self, bytes("8301f603"))
    sameDecoding([String: Int].self, bytes("bf616101616202ff"))
    sameDecoding([String: Int].self, bytes("a2616101616102"))
    sameDecoding(CBORTestShape.self, bytes("a1"))
    sameDecoding(Date.self, bytes("c16161"))
    var rng = SplitMix64(seed: 7)
    for _ in 0..<2_000 {
      var mutated = model
      mutated[Int(rng.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: rng.next())
      sameDecoding(CBORTestModel.self, mutated)
    }
  }
}
