import Foundation

extension CBORValue {
  /// JSON text for humans and tools that lack the Swift type.
  ///
  /// The mapping is lossy but always valid JSON:
  /// - integers are printed exactly (the whole `negative` range included);
  ///   floats use the shortest decimal that round-trips, with NaN and the
  ///   infinities as the strings `"NaN"`, `"Infinity"` and `"-Infinity"`;
  /// - byte strings become base64 strings;
  /// - maps become objects with keys in stored order; a non-text key is
  ///   rendered as JSON and used as the key string (key `1` → `"1"`);
  /// - tag 1 (and RFC 9581 tag 1001 holding only a base time) becomes an
  ///   ISO 8601 UTC string with fractional seconds; tag 37 over 16 bytes a
  ///   UUID string; tag 32 over text the URL string; any other tag
  ///   `{"tag": N, "value": …}`;
  /// - `undefined` becomes `null` and `simple(n)` becomes `{"simple": n}`.
  ///
  /// Strings escape `"` and `\` with a backslash and every control character
  /// below U+0020 as `\u00XX`.
  ///
  /// `prettyPrinted` puts every array element and object member on its own
  /// line with two-space indentation; the compact form has no whitespace.
  public func jsonText(prettyPrinted: Bool = false) -> String {
    var writer = CBORJSONWriter(pretty: prettyPrinted)
    writer.write(self, level: 0)
    return String(decoding: writer.out, as: UTF8.self)
  }
}

/// Streams a `CBORValue` as UTF-8 JSON.
struct CBORJSONWriter {
  var out: [UInt8] = []
  let pretty: Bool

  init(pretty: Bool) {
    self.pretty = pretty
    out.reserveCapacity(256)
  }

  private mutating func ascii(_ s: String) {
    out.append(contentsOf: s.utf8)
  }

  private mutating func newline(_ level: Int) {
    guard pretty else { return }
    out.append(0x0a)
    for _ in 0..<level {
      out.append(0x20)
      out.append(0x20)
    }
  }

  mutating func write(_ value: CBORValue, level: Int) {
    switch value {
    case .unsigned(let n):
      ascii(String(n))
    case .negative(let n):
      ascii(CBORValue.negativeDecimal(n))
    case .bytes(let b):
      out.append(0x22)
      CBORBase64.append(b, to: &out)
      out.append(0x22)
    case .text(let s):
      string(s)
    case .array(let items):
      if items.isEmpty {
        ascii("[]")
        return
      }
      out.append(0x5b)
      for (i, item) in items.enumerated() {
        if i > 0 { out.append(0x2c) }
        newline(level + 1)
        write(item, level: level + 1)
      }
      newline(level)
      out.append(0x5d)
    case .map(let entries):
      if entries.isEmpty {
        ascii("{}")
        return
      }
      out.append(0x7b)
      for (i, entry) in entries.enumerated() {
        if i > 0 { out.append(0x2c) }
        newline(level + 1)
        key(entry.key)
        out.append(0x3a)
        if pretty { out.append(0x20) }
        write(entry.value, level: level + 1)
      }
      newline(level)
      out.append(0x7d)
    case .tagged(let tag, let content):
      tagged(tag, content, level: level)
    case .bool(let b):
      ascii(b ? "true" : "false")
    case .null, .undefined:
      ascii("null")
    case .simple(let n):
      write(.map([CBORMapEntry(key: .text("simple"), value: .unsigned(UInt64(n)))]), level: level)
    case .float16(let f), .float32(let f):
      if f.isNaN {
        ascii("\"NaN\"")
      } else if f.isInfinite {
        ascii(f < 0 ? "\"-Infinity\"" : "\"Infinity\"")
      } else {
        ascii(f.description)
      }
    case .float64(let d):
      if d.isNaN {
        ascii("\"NaN\"")
      } else if d.isInfinite {
        ascii(d < 0 ? "\"-Infinity\"" : "\"Infinity\"")
      } else {
        ascii(d.description)
      }
    }
  }

  private mutating func tagged(_ tag: UInt64, _ content: CBORValue, level: Int) {
    switch (tag, content) {
    case (1, _):
      if let seconds = CBORDateDecoding.seconds(content),
        let (whole, nanos) = CBORISO8601.split(seconds),
        let text = CBORISO8601.format(seconds: whole, nanoseconds: nanos)
      {
        string(text)
        return
      }
    case (1001, .map(let entries)):
      if entries.count == 1, let text = CBORISO8601.extendedTime(entries) {
        string(text)
        return
      }
    case (37, .bytes(let b)) where b.count == 16:
      string(CBORUUIDText.format(b))
      return
    case (32, .text(let s)):
      string(s)
      return
    default:
      break
    }
    write(
      .map([
        CBORMapEntry(key: .text("tag"), value: .unsigned(tag)),
        CBORMapEntry(key: .text("value"), value: content),
      ]),
      level: level)
  }

  private mutating func key(_ key: CBORValue) {
    if case .text(let s) = key {
      string(s)
      return
    }
    var inner = CBORJSONWriter(pretty: false)
    inner.write(key, level: 0)
    if inner.out.first == 0x22 {
      out.append(contentsOf: inner.out)
    } else {
      string(String(decoding: inner.out, as: UTF8.self))
    }
  }

  private mutating func string(_ s: String) {
    JSONString.append(s, to: &out, shortEscapes: false)
  }
}

// MARK: - Base64

/// Standard base64 (RFC 4648 §4) with padding.
enum CBORBase64 {
  private static let alphabet: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
    var i = 0
    let n = bytes.count
    while n - i >= 3 {
      let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
      out.append(alphabet[Int(v >> 18)])
      out.append(alphabet[Int((v >> 12) & 0x3f)])
      out.append(alphabet[Int((v >> 6) & 0x3f)])
      out.append(alphabet[Int(v & 0x3f)])
      i += 3
    }
    if n - i == 1 {
      let v = UInt32(bytes[i]) << 16
      out.append(alphabet[Int(v >> 18)])
      out.append(alphabet[Int((v >> 12) & 0x3f)])
      out.append(0x3d)
      out.append(0x3d)
    } else if n - i == 2 {
      let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
      out.append(alphabet[Int(v >> 18)])
      out.append(alphabet[Int((v >> 12) & 0x3f)])
      out.append(alphabet[Int((v >> 6) & 0x3f)])
      out.append(0x3d)
    }
  }
}

// MARK: - UUID text

/// The canonical 8-4-4-4-12 form, uppercase like `UUID.uuidString`.
enum CBORUUIDText {
  private static let digits: [Character] = Array("0123456789ABCDEF")

  static func format(_ bytes: [UInt8]) -> String {
    var s = ""
    s.reserveCapacity(36)
    for (i, byte) in bytes.enumerated() {
      if i == 4 || i == 6 || i == 8 || i == 10 { s.append("-") }
      s.append(digits[Int(byte >> 4)])
      s.append(digits[Int(byte & 0xf)])
    }
    return s
  }
}

// MARK: - ISO 8601

/// Formats instants as `YYYY-MM-DDTHH:MM:SS.fffZ` (3, 6 or 9 fraction digits).
enum CBORISO8601 {
  /// 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z in seconds since 1970.
  static let minSeconds: Int64 = -62_167_219_200
  static let endSeconds: Int64 = 253_402_300_800

  /// Whole seconds (floored) and nanoseconds of a float seconds value in the printable range.
  static func split(_ seconds: Double) -> (Int64, Int)? {
    guard seconds.isFinite, seconds >= Double(minSeconds), seconds < Double(endSeconds) else { return nil }
    let floored = seconds.rounded(.down)
    var whole = Int64(floored)
    var nanos = Int(((seconds - floored) * 1e9).rounded())
    if nanos >= 1_000_000_000 {
      whole += 1
      nanos -= 1_000_000_000
    }
    return (whole, nanos)
  }

  /// ISO text of an RFC 9581 extended-time map, exact to the nanosecond.
  static func extendedTime(_ entries: [CBORMapEntry]) -> String? {
    guard let t = CBORDateDecoding.sinceReferenceDate(extended: entries), t.isFinite else { return nil }
    let delta = Int64(CBORSpecialEncoding.epochDelta)
    guard t >= Double(minSeconds - delta), t < Double(endSeconds - delta) else { return nil }
    // Split relative to 2001, where the Double is exact, then shift whole seconds.
    let floored = t.rounded(.down)
    var whole = Int64(floored) + delta
    var nanos = Int(((t - floored) * 1e9).rounded())
    if nanos >= 1_000_000_000 {
      whole += 1
      nanos -= 1_000_000_000
    }
    return format(seconds: whole, nanoseconds: nanos)
  }

  /// The ISO text, or `nil` outside years 0000–9999.
  static func format(seconds: Int64, nanoseconds: Int) -> String? {
    guard seconds >= minSeconds, seconds < endSeconds else { return nil }
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let secondOfDay = Int(seconds - days * 86_400)
    let (year, month, day) = CivilDate.from(days: days)

    var s = ""
    s.reserveCapacity(30)
    pad(&s, Int(year), 4)
    s.append("-")
    pad(&s, Int(month), 2)
    s.append("-")
    pad(&s, Int(day), 2)
    s.append("T")
    pad(&s, secondOfDay / 3600, 2)
    s.append(":")
    pad(&s, secondOfDay / 60 % 60, 2)
    s.append(":")
    pad(&s, secondOfDay % 60, 2)
    s.append(".")
    if nanoseconds % 1_000_000 == 0 {
      pad(&s, nanoseconds / 1_000_000, 3)
    } else if nanoseconds % 1_000 == 0 {
      pad(&s, nanoseconds / 1_000, 6)
    } else {
      pad(&s, nanoseconds, 9)
    }
    s.append("Z")
    return s
  }

  private static func pad(_ s: inout String, _ value: Int, _ width: Int) {
    let digits = String(value)
    if digits.count < width {
      s.append(String(repeating: "0", count: width - digits.count))
    }
    s.append(digits)
  }
}
