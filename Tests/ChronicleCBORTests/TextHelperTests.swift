import Foundation
import ChronicleTestTools
import Testing

@testable import ChronicleCBOR

// MARK: - Hexadecimal

@Suite("Text helpers: hexadecimal")
struct HexTests {
  @Test func roundTripsEveryByte() {
    let all = (0...255).map(UInt8.init)
    let text = all.hex
    #expect(text.count == 512)
    #expect(text.hasPrefix("000102") && text.hasSuffix("fdfeff"))
    #expect([UInt8](hex: text) == all)
    #expect([UInt8](hex: text.uppercased()) == all)
    #expect([UInt8](hex: "") == [])
    #expect([UInt8]().hex == "")
  }

  @Test func separatesBytesWhenAsked() {
    #expect([0x0a, 0xff, 0x00].hex(separator: " ") == "0a ff 00")
    #expect([0x0a].hex(separator: ", ") == "0a")
    #expect([0x0a, 0xff].hex(separator: "") == "0aff")
  }

  @Test func refusesOddLengthsAndOtherCharacters() {
    for text in ["0", "abc", "0g", "g0", "0x12", " 12", "12 ", "+1", "1-", "éé", "12\n"] {
      #expect([UInt8](hex: text) == nil, "\(text)")
    }
  }
}

// MARK: - ISO 8601

@Suite("Text helpers: ISO 8601")
struct ISOTimeTests {
  /// Microseconds since 1970 of midnight UTC on a proleptic Gregorian date.
  private func micros(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    ISOTime.days(fromCivil: year, month, day) * 86_400_000_000
  }

  @Test func microsecondTimestamps() {
    #expect(ISOTime.string(micros: 0) == "1970-01-01T00:00:00.000000Z")
    #expect(ISOTime.string(micros: 1_500) == "1970-01-01T00:00:00.001500Z")
    #expect(ISOTime.string(micros: 1_500, fractionDigits: 3) == "1970-01-01T00:00:00.001Z")
    #expect(ISOTime.string(micros: 1_999_999, fractionDigits: 0) == "1970-01-01T00:00:01Z")
    #expect(ISOTime.string(micros: -1) == "1969-12-31T23:59:59.999999Z")
    #expect(ISOTime.string(micros: -1, fractionDigits: 3) == "1969-12-31T23:59:59.999Z")
    #expect(ISOTime.string(micros: 951_782_400_123_456) == "2000-02-29T00:00:00.123456Z")
    #expect(ISOTime.day(micros: -1) == "1969-12-31")
  }

  @Test func yearsOutsideFourDigits() {
    #expect(ISOTime.string(micros: micros(0, 1, 1)) == "0000-01-01T00:00:00.000000Z")
    #expect(ISOTime.string(micros: micros(0, 1, 1) - 1) == "-0001-12-31T23:59:59.999999Z")
    #expect(ISOTime.string(micros: micros(-5, 3, 1)) == "-0005-03-01T00:00:00.000000Z")
    #expect(ISOTime.day(micros: micros(-44, 3, 15)) == "-0044-03-15")
    #expect(ISOTime.day(micros: micros(-12_345, 2, 28)) == "-12345-02-28")
    #expect(ISOTime.string(micros: micros(10_000, 1, 1)) == "10000-01-01T00:00:00.000000Z")
    #expect(ISOTime.string(micros: .max) == "294247-01-10T04:00:54.775807Z")
    #expect(ISOTime.string(micros: .min) == "-290308-12-21T19:59:05.224192Z")
  }

  @Test func calendarArithmeticRoundTrips() {
    for days in stride(from: Int64(-1_000_000), through: 3_000_000, by: 997) {
      let (year, month, day) = ISOTime.civil(fromDays: days)
      #expect(ISOTime.days(fromCivil: year, month, day) == days)
    }
    #expect(ISOTime.civil(fromDays: 0) == (1970, 1, 1))
    #expect(ISOTime.civil(fromDays: 11_016) == (2000, 2, 29))
    #expect(ISOTime.civil(fromDays: -719_528) == (0, 1, 1))
  }

  @Test func agreesWithFoundationAndParsesItsOwnText() {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    formatter.timeZone = TimeZone(identifier: "UTC")
    var random = SplitMix64(seed: 0x150_8601)
    // From 1600 on: Foundation's Gregorian calendar switches to Julian dates before October 1582.
    let range = micros(1600, 1, 1)...micros(9999, 12, 31)
    for _ in 0..<2_000 {
      let value = Int64.random(in: range, using: &random)
      let text = ISOTime.string(micros: value)
      #expect(ISOTime.parse(text) == value, "\(text)")
      let milliseconds = ISOTime.floorDivide(value, 1_000).0
      let date = Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
      #expect(ISOTime.string(micros: value, fractionDigits: 3) == formatter.string(from: date), "\(value)")
    }
  }

  @Test func secondsAndNanoseconds() {
    #expect(ISOTime.string(seconds: 0, nanoseconds: 500_000_000) == "1970-01-01T00:00:00.500Z")
    #expect(ISOTime.string(seconds: 0, nanoseconds: 1_000) == "1970-01-01T00:00:00.000001Z")
    #expect(ISOTime.string(seconds: 0, nanoseconds: 1) == "1970-01-01T00:00:00.000000001Z")
    #expect(ISOTime.string(seconds: -1, nanoseconds: 999_999_999) == "1969-12-31T23:59:59.999999999Z")
    #expect(ISOTime.string(seconds: ISOTime.minSeconds, nanoseconds: 0) == "0000-01-01T00:00:00.000Z")
    #expect(
      ISOTime.string(seconds: ISOTime.endSeconds - 1, nanoseconds: 999_999_999) == "9999-12-31T23:59:59.999999999Z")
    #expect(ISOTime.string(seconds: ISOTime.endSeconds, nanoseconds: 0) == nil)
    #expect(ISOTime.string(seconds: ISOTime.minSeconds - 1, nanoseconds: 999_999_999) == nil)
    #expect(ISOTime.string(seconds: 0, nanoseconds: 1_000_000_000) == nil)
    #expect(ISOTime.string(seconds: 0, nanoseconds: -1) == nil)

    #expect(ISOTime.split(-0.25)! == (-1, 750_000_000))
    #expect(ISOTime.split(1.9999999999)! == (2, 0))
    #expect(ISOTime.split(Double(ISOTime.endSeconds)) == nil)
    #expect(ISOTime.split(.nan) == nil)
    #expect(ISOTime.split(-.infinity) == nil)
  }

  @Test func cborDatesRenderThroughTheSameText() {
    #expect(CBORValue.tagged(1, .float64(-0.25)).jsonText() == #""1969-12-31T23:59:59.750Z""#)
    #expect(CBORValue.tagged(1, .unsigned(0)).jsonText() == #""1970-01-01T00:00:00.000Z""#)
    #expect(
      CBORValue.tagged(1, .float64(Double(ISOTime.endSeconds))).jsonText() == #"{"tag":1,"value":253402300800.0}"#)
  }
}

// MARK: - Base64

@Suite("Text helpers: base64")
struct Base64Tests {
  /// RFC 4648 §10.
  private let vectors = [
    ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
    ("foobar", "Zm9vYmFy"),
  ]

  @Test func rfc4648Vectors() {
    for (plain, encoded) in vectors {
      #expect(Array(plain.utf8).base64 == encoded)
      #expect([UInt8](base64: encoded) == Array(plain.utf8))
      #expect(CBORValue.bytes(Array(plain.utf8)).jsonText() == "\"\(encoded)\"")
    }
  }

  @Test func agreesWithFoundationAndRefusesBadText() {
    var random = SplitMix64(seed: 0xB64)
    for length in 0..<200 {
      let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
      #expect(bytes.base64 == Data(bytes).base64EncodedString())
      #expect([UInt8](base64: bytes.base64) == bytes)
    }
    for text in ["Zg=", "Z", "Zm9v!", "Zm 9v"] { #expect([UInt8](base64: text) == nil, "\(text)") }
  }
}

// MARK: - JSON

@Suite("Text helpers: JSON")
struct JSONTextTests {
  @Test func stringsEscapeQuotesBackslashesAndControlCharacters() {
    func quoted(_ text: String, short: Bool) -> String {
      var out: [UInt8] = []
      JSONString.append(text, to: &out, shortEscapes: short)
      return String(decoding: out, as: UTF8.self)
    }
    #expect(quoted("a\"b\\c/é🏦", short: false) == #""a\"b\\c/é🏦""#)
    #expect(quoted("\n\r\t\u{0}\u{1f}", short: false) == #""\u000a\u000d\u0009\u0000\u001f""#)
    #expect(quoted("\n\r\t\u{0}\u{1f}", short: true) == #""\n\r\t\u0000\u001f""#)
    #expect(JSONCheck.isValid(Array(quoted("\u{1}x\n", short: true).utf8)))
  }

  @Test func writerSeparatesMembersAndElements() {
    var out = JSONWriter()
    out.beginObject()
    out.field("seq", UInt64(1))
    out.field("name", "a\"b")
    out.key("list")
    out.beginArray()
    out.int(-1)
    out.bool(true)
    out.null()
    out.double(.nan)
    out.beginObject()
    out.endObject()
    out.endArray()
    out.key("payload")
    out.raw(#"{"increment":{}}"#)
    out.endObject()
    out.newline()
    out.beginArray()
    out.endArray()
    #expect(out.text == #"{"seq":1,"name":"a\"b","list":[-1,true,null,null,{}],"payload":{"increment":{}}}"# + "\n[]")
    #expect(JSONCheck.isValid(Array(out.text.split(separator: "\n")[0].utf8)))
  }
}
