import ChronicleCBOR
import ChronicleLog
import ChronicleMacros
import Foundation
import Testing

// MARK: - Shapes

@CBORCodable
enum LedgerAction: Codable, Equatable {
  case open(String)
  case deposit(String, cents: Int)
  case transfer(from: String, to: String, cents: Int)
  case close
}

@CBORCodable
struct Scalars: Codable, Equatable {
  var int: Int
  var int8: Int8
  var int16: Int16
  var int32: Int32
  var int64: Int64
  var uint: UInt
  var uint8: UInt8
  var uint16: UInt16
  var uint32: UInt32
  var uint64: UInt64
  var double: Double
  var float: Float
  var bool: Bool
  var string: String
}

typealias MaybeInt = Int?

@CBORCodable
struct Optionals: Codable, Equatable {
  var int: Int?
  var string: String?
  var ints: [Int]?
  var doubly: Int??
  var aliased: MaybeInt
  var scalars: Scalars?
  var level: Level?
  var last: Bool
}

@CBORCodable
enum Level: String, Codable, Equatable {
  case low, high
  case `default`
}

@CBORCodable
enum Code: Int, Codable, Equatable {
  case one = 1
  case big = 100_000
}

/// A nested type with the synthesized conformance only.
struct PlainPoint: Codable, Equatable {
  var x: Int
  var y: Int?
}

@CBORCodable
struct Collections: Codable, Equatable {
  var ints: [Int]
  var strings: [String]
  var nested: [[Int]]
  var optionals: [Int?]
  var dictionary: [String: Int]
  var nestedDictionary: [String: [String: Int]]
  /// Values without a direct form: the dictionary goes through `Codable`.
  var pointsByName: [String: PlainPoint]
  var points: [PlainPoint]
  var actions: [LedgerAction]
}

@CBORCodable
struct FoundationValues: Codable, Equatable {
  var date: Date
  var data: Data
  var uuid: UUID
  var url: URL?
  var point: PlainPoint
}

@CBORCodable
enum Mixed: Codable, Equatable {
  case optionals(Int?, label: String?)
  case unlabelled(_ inner: Int, more: [String])
  case labelThenNot(first: Int, Int, third: Bool)
  case nested(Scalars, level: Level, code: Code, point: PlainPoint)
  case `default`
  case date(Date)
}

@CBORCodable
struct Empty: Codable, Equatable {}

@CBORCodable
struct Observed: Codable, Equatable {
  static let unused = 3
  var value: Int {
    didSet { changes += 1 }
  }
  var changes = 0
  var doubled: Int { value * 2 }
  var `default`: String
}

@CBORCodable
struct Box<Content: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
  var content: Content
  var contents: [Content]
}

@CBORCodable
public struct PublicAction: Codable, Equatable, Sendable {
  public var name: String
  public var count: Int
}

/// A value whose `Encodable` conformance throws.
struct Refuses: Codable, Equatable {
  struct Refused: Error, Equatable {}

  init() {}
  init(from decoder: any Decoder) throws {}
  func encode(to encoder: any Encoder) throws { throw Refused() }
}

@CBORCodable
struct HoldsRefuses: Codable, Equatable {
  var before: Int
  var refuses: Refuses
}

// MARK: - Samples

/// One value of every shape, in several states (optionals present and absent, extremes).
let samples: [any CBORCodable & Equatable & Sendable] = {
  let scalars = Scalars(
    int: -1, int8: .min, int16: .max, int32: -70_000, int64: .min, uint: .max, uint8: 255, uint16: 256,
    uint32: 65_536, uint64: .max, double: -0.0, float: .infinity, bool: true, string: "naïve ✓")
  let small = Scalars(
    int: 23, int8: 24, int16: -24, int32: -25, int64: 1 << 40, uint: 0, uint8: 0, uint16: 0, uint32: 0, uint64: 0,
    double: 1.5, float: -2.25, bool: false, string: "")
  let date = Date(timeIntervalSince1970: 1_700_000_000.25)
  let values: [any CBORCodable & Equatable & Sendable] = [
    LedgerAction.open("acct-00001"), LedgerAction.deposit("acct-00002", cents: 10_000),
    LedgerAction.transfer(from: "a", to: "b", cents: -3), LedgerAction.close,
    scalars, small,
    Optionals(int: nil, string: nil, ints: nil, doubly: nil, aliased: nil, scalars: nil, level: nil, last: false),
    Optionals(
      int: 5, string: "s", ints: [1, 2], doubly: nil, aliased: 7, scalars: small, level: .high, last: true),
    Optionals(int: nil, string: "", ints: [], doubly: .some(.some(3)), aliased: nil, scalars: nil, level: nil, last: true),
    Level.low, Level.default, Code.one, Code.big,
    Collections(
      ints: [0, -1, 1_000_000], strings: ["x", ""], nested: [[], [1]], optionals: [nil, 2],
      dictionary: ["k": 1], nestedDictionary: ["a": ["x": -1, "y": 2], "": [:]],
      pointsByName: ["p": PlainPoint(x: 1, y: 2)], points: [PlainPoint(x: 1, y: nil)], actions: [.close, .open("o")]),
    Collections(
      ints: [], strings: [], nested: [], optionals: [],
      dictionary: Dictionary(uniqueKeysWithValues: (0..<300).map { ("account-\($0)", $0 * 1_000 - 70_000) }),
      nestedDictionary: [:], pointsByName: [:], points: [], actions: []),
    Collections(
      ints: [], strings: [], nested: [], optionals: [], dictionary: [:], nestedDictionary: [:], pointsByName: [:],
      points: [], actions: []),
    FoundationValues(
      date: date, data: Data([0, 1, 255]), uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
      url: URL(string: "https://example.com/a?b=c"), point: PlainPoint(x: -5, y: 6)),
    FoundationValues(date: Date(timeIntervalSince1970: 0), data: Data(), uuid: UUID(), url: nil, point: PlainPoint(x: 0, y: nil)),
    Mixed.optionals(nil, label: nil), Mixed.optionals(1, label: "l"), Mixed.optionals(nil, label: ""),
    Mixed.unlabelled(3, more: ["m"]), Mixed.labelThenNot(first: 1, 2, third: false),
    Mixed.nested(small, level: .low, code: .big, point: PlainPoint(x: 1, y: 2)), Mixed.default, Mixed.date(date),
    Empty(), Observed(value: 4, changes: 2, default: "d"), Box(content: "c", contents: ["d", "e"]),
    Box(content: PlainPoint(x: 1, y: nil), contents: []), Box(content: LedgerAction.close, contents: [.open("x")]),
    Box<Int?>(content: nil, contents: [nil, 1]), PublicAction(name: "p", count: 1 << 33),
  ]
  return values
}()

// MARK: - Tests

@Suite struct GeneratedCodingTests {
  /// The generated conformance writes the synthesized `Codable` conformance's bytes, and each
  /// reads the other's.
  @Test(arguments: samples.indices)
  func theSameBytesAsCodable(index: Int) throws {
    try check(samples[index])
  }

  private func check<T: CBORCodable & Equatable>(_ value: T) throws {
    let codable = try CBOREncoder().encode(value)
    let generated = value.cborBytes
    #expect(generated == codable, "\(T.self): \(value)")
    // The generated reader accepts Codable's bytes: nil would mean a fallback to Codable.
    let readGenerated = codable.withUnsafeBytes { T(cborBytes: $0) }
    #expect(readGenerated == value, "\(T.self) read by the generated conformance")
    let readCodable = try generated.withUnsafeBytes { try CBORDecoder().decode(T.self, from: $0) }
    #expect(readCodable == value, "\(T.self) read through Codable")
    #expect(try PayloadCodec.cbor.encode(value) == codable)
  }

  /// Bytes the generated reader does not take (keys in another order, an unknown key, an
  /// indefinite-length map) still decode through `Codable`, as the store decodes them.
  @Test func otherFormsFallBackToCodable() throws {
    let reordered: CBORValue = .map([
      CBORMapEntry(key: .text("transfer"), value: .map([
        CBORMapEntry(key: .text("cents"), value: .unsigned(5)),
        CBORMapEntry(key: .text("to"), value: .text("b")),
        CBORMapEntry(key: .text("from"), value: .text("a")),
      ]))
    ])
    let extraKey: CBORValue = .map([
      CBORMapEntry(key: .text("last"), value: .bool(true)),
      CBORMapEntry(key: .text("unknown"), value: .unsigned(1)),
    ])
    // 0xbf: an indefinite-length map holding "int": 1 and "last": false.
    let indefinite: [UInt8] = [0xbf, 0x63, 0x69, 0x6e, 0x74, 0x01, 0x64, 0x6c, 0x61, 0x73, 0x74, 0xf4, 0xff]

    let transfer = reordered.encoded()
    #expect(transfer.withUnsafeBytes { LedgerAction(cborBytes: $0) } == nil)
    let decoded = try transfer.withUnsafeBytes { try PayloadCodec.cbor.decode(LedgerAction.self, from: $0) }
    #expect(decoded == .transfer(from: "a", to: "b", cents: 5))

    for (bytes, expected) in [
      (extraKey.encoded(), Optionals(int: nil, string: nil, ints: nil, doubly: nil, aliased: nil, scalars: nil, level: nil, last: true)),
      (indefinite, Optionals(int: 1, string: nil, ints: nil, doubly: nil, aliased: nil, scalars: nil, level: nil, last: false)),
    ] {
      #expect(bytes.withUnsafeBytes { Optionals(cborBytes: $0) } == nil)
      #expect(try bytes.withUnsafeBytes { try PayloadCodec.cbor.decode(Optionals.self, from: $0) } == expected)
    }
  }

  /// Truncated or mistyped bytes throw a one-line error naming the offset, never crash.
  @Test func badBytesThrow() throws {
    let bytes = LedgerAction.transfer(from: "a", to: "b", cents: 70_000).cborBytes
    for length in 0..<bytes.count {
      let prefix = Array(bytes[..<length])
      #expect(prefix.withUnsafeBytes { LedgerAction(cborBytes: $0) } == nil)
      #expect(throws: (any Error).self) { try prefix.withUnsafeBytes { try PayloadCodec.cbor.decode(LedgerAction.self, from: $0) } }
    }
    var unknown = LedgerAction.close.cborBytes
    unknown[3] = UInt8(ascii: "k")  // "close" → "ckose"
    let error = unknown.withUnsafeBytes { buffer -> (any Error)? in
      var reader = CBORReader(buffer)
      do {
        _ = try LedgerAction(from: &reader)
        return nil
      } catch { return error }
    }
    #expect("\(error.map { "\($0)" } ?? "")".contains("unknown case ckose of LedgerAction"))
  }

  /// A nested value whose `Encodable` conformance throws makes the payload codec throw that
  /// error, as `Codable` does, instead of writing a half-encoded value.
  @Test func aThrowingNestedValueThrows() throws {
    let value = HoldsRefuses(before: 1, refuses: Refuses())
    var writer = CBORWriter()
    value.encode(to: &writer)
    #expect(writer.failure is Refuses.Refused)
    #expect(throws: Refuses.Refused.self) { try PayloadCodec.cbor.encode(value) }
    #expect(throws: Refuses.Refused.self) { try PayloadCodec.cbor.encode([value]) }
  }
}
