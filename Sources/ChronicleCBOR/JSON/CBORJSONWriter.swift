import Foundation

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
      out.append(contentsOf: b.base64.utf8)
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
        let (whole, nanos) = ISOTime.split(seconds),
        let text = ISOTime.string(seconds: whole, nanoseconds: nanos)
      {
        string(text)
        return
      }
    case (1001, .map(let entries)):
      if entries.count == 1, let text = Self.extendedTime(entries) {
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

  /// ISO text of an RFC 9581 extended-time map, exact to the nanosecond; `nil` outside years 0000–9999.
  private static func extendedTime(_ entries: [CBORMapEntry]) -> String? {
    guard let t = CBORDateDecoding.sinceReferenceDate(extended: entries), t.isFinite else { return nil }
    let delta = Int64(CBORSpecialEncoding.epochDelta)
    guard t >= Double(ISOTime.minSeconds - delta), t < Double(ISOTime.endSeconds - delta) else { return nil }
    // Split relative to 2001, where the Double is exact, then shift whole seconds.
    let floored = t.rounded(.down)
    var whole = Int64(floored) + delta
    var nanos = Int(((t - floored) * 1e9).rounded())
    if nanos >= 1_000_000_000 {
      whole += 1
      nanos -= 1_000_000_000
    }
    return ISOTime.string(seconds: whole, nanoseconds: nanos)
  }
}
