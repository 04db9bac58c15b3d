import Foundation

/// A bounds-checked, non-recursive-allocation CBOR parser over raw memory.
///
/// Every length and count is compared with the bytes remaining before any
/// allocation, nesting is limited to `maxDepth`, and all arithmetic is done in
/// ways that cannot overflow, so arbitrary input can only produce a value or a
/// `CBORError`.
struct CBORParser {
  /// Maximum number of nested arrays, maps, tags and indefinite strings.
  static let maxDepth = 256

  /// Upper bound on the capacity reserved up front for an array or map.
  ///
  /// Declared counts are already bounded by the remaining input, but every
  /// open container along a 256-deep path could otherwise reserve storage for
  /// the whole rest of the input at once (quadratic memory for hostile
  /// input). Larger containers grow geometrically as items actually parse.
  static let maxReservation = 64

  private let base: UnsafeRawPointer
  private let end: Int
  private var pos: Int = 0

  private init(base: UnsafeRawPointer, count: Int) {
    self.base = base
    self.end = count
  }

  /// Parses one data item spanning the whole buffer.
  static func parseDocument(_ buffer: UnsafeRawBufferPointer) throws(CBORError) -> CBORValue {
    guard let base = buffer.baseAddress, buffer.count > 0 else {
      throw CBORError(offset: 0, reason: "truncated: empty input, expected a data item")
    }
    var parser = CBORParser(base: base, count: buffer.count)
    let value = try parser.parseItem(depth: 0)
    if parser.pos != parser.end {
      throw CBORError(
        offset: parser.pos,
        reason: "trailing bytes: \(parser.end - parser.pos) bytes after the data item")
    }
    return value
  }

  /// Parses the one data item that spans `range` of `buffer` (already validated).
  static func parse(_ buffer: UnsafeRawBufferPointer, item range: Range<Int>) throws(CBORError) -> CBORValue {
    try parseDocument(UnsafeRawBufferPointer(rebasing: buffer[range]))
  }

  /// Checks that `buffer` holds exactly one well-formed data item, as
  /// ``parseDocument(_:)`` would, without building it; throws the error that
  /// `parseDocument` throws.
  static func validate(_ buffer: UnsafeRawBufferPointer) throws(CBORError) {
    if let base = buffer.baseAddress, buffer.count > 0 {
      var parser = CBORParser(base: base, count: buffer.count)
      if (try? parser.skipItem(depth: 0)) != nil, parser.pos == parser.end { return }
    }
    _ = try parseDocument(buffer)
  }

  /// The offset just after the well-formed data item that starts at `offset` in `buffer`.
  static func end(of buffer: UnsafeRawBufferPointer, at offset: Int) throws(CBORError) -> Int {
    guard let base = buffer.baseAddress, offset < buffer.count else {
      throw CBORError(offset: offset, reason: "truncated: expected a data item")
    }
    var parser = CBORParser(base: base, count: buffer.count)
    parser.pos = offset
    try parser.skipItem(depth: 0)
    return parser.pos
  }

  /// Walks one data item as ``parseItem(depth:)`` does, checking the same rules, building nothing.
  private mutating func skipItem(depth: Int) throws(CBORError) {
    guard pos < end else { throw CBORError(offset: pos, reason: "truncated") }
    let start = pos
    let initial = byte(at: pos)
    pos += 1
    let major = initial >> 5
    let ai = initial & 0x1f
    if ai == 31 {
      guard major >= 2, major <= 5 else { throw CBORError(offset: start, reason: "indefinite length") }
      try checkDepth(depth, start: start)
      while true {
        guard pos < end else { throw CBORError(offset: pos, reason: "no break") }
        if byte(at: pos) == 0xff {
          pos += 1
          return
        }
        if major <= 3 {
          // A chunk: a definite string of the same type.
          guard byte(at: pos) >> 5 == major, byte(at: pos) & 0x1f != 31 else {
            throw CBORError(offset: pos, reason: "bad chunk")
          }
        }
        try skipItem(depth: depth + 1)
        if major == 5 {
          guard pos < end, byte(at: pos) != 0xff else { throw CBORError(offset: pos, reason: "key without value") }
          try skipItem(depth: depth + 1)
        }
      }
    }
    let n = try argument(ai, major: major, start: start)
    switch major {
    case 2, 3:
      let count = try stringLength(n, major: major, start: start)
      if major == 3, CBORUTF8.firstInvalidByte(UnsafeBufferPointer(start: (base + pos).assumingMemoryBound(to: UInt8.self), count: count)) != nil {
        throw CBORError(offset: pos, reason: "invalid UTF-8")
      }
      pos += count
    case 4, 5:
      try checkDepth(depth, start: start)
      guard n <= UInt64(remaining) else { throw CBORError(offset: start, reason: "truncated") }
      for _ in 0..<(major == 5 ? 2 * Int(n) : Int(n)) { try skipItem(depth: depth + 1) }
    case 6:
      try checkDepth(depth, start: start)
      try skipItem(depth: depth + 1)
    case 7:
      if ai == 24, n < 32 { throw CBORError(offset: start, reason: "invalid simple value") }
    default:
      break
    }
  }

  @inline(__always)
  private var remaining: Int { end - pos }

  @inline(__always)
  private func byte(at offset: Int) -> UInt8 {
    base.load(fromByteOffset: offset, as: UInt8.self)
  }

  private static func majorName(_ major: UInt8) -> String {
    switch major {
    case 0: return "unsigned integer"
    case 1: return "negative integer"
    case 2: return "byte string"
    case 3: return "text string"
    case 4: return "array"
    case 5: return "map"
    case 6: return "tag"
    default: return "simple value or float"
    }
  }

  /// Reads the argument that follows an initial byte with additional info `ai` (0–27).
  @inline(__always)
  private mutating func argument(_ ai: UInt8, major: UInt8, start: Int) throws(CBORError) -> UInt64 {
    if ai < 24 { return UInt64(ai) }
    let size: Int
    switch ai {
    case 24: size = 1
    case 25: size = 2
    case 26: size = 4
    case 27: size = 8
    default:
      throw CBORError(offset: start, reason: "reserved additional info \(ai)")
    }
    guard size <= remaining else {
      throw CBORError(
        offset: start,
        reason: "truncated: \(Self.majorName(major)) argument needs \(size) bytes, \(remaining) remain")
    }
    let value: UInt64
    switch size {
    case 1: value = UInt64(byte(at: pos))
    case 2: value = UInt64(UInt16(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt16.self)))
    case 4: value = UInt64(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt32.self)))
    default: value = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt64.self))
    }
    pos += size
    return value
  }

  @inline(__always)
  private func checkDepth(_ depth: Int, start: Int) throws(CBORError) {
    if depth >= Self.maxDepth {
      throw CBORError(offset: start, reason: "nesting deeper than \(Self.maxDepth)")
    }
  }

  /// Parses one data item; `depth` is the number of enclosing containers.
  private mutating func parseItem(depth: Int) throws(CBORError) -> CBORValue {
    guard pos < end else {
      throw CBORError(offset: pos, reason: "truncated: expected a data item, 0 bytes remain")
    }
    let start = pos
    let initial = byte(at: pos)
    pos += 1
    let major = initial >> 5
    let ai = initial & 0x1f

    switch major {
    case 0, 1:
      if ai == 31 {
        throw CBORError(offset: start, reason: "indefinite length not allowed for \(Self.majorName(major))")
      }
      let n = try argument(ai, major: major, start: start)
      return major == 0 ? .unsigned(n) : .negative(n)

    case 2, 3:
      if ai == 31 {
        try checkDepth(depth, start: start)
        return try parseIndefiniteString(major: major, start: start)
      }
      let n = try argument(ai, major: major, start: start)
      let count = try stringLength(n, major: major, start: start)
      let bytes = UnsafeRawBufferPointer(start: base + pos, count: count)
      if major == 2 {
        pos += count
        return .bytes([UInt8](bytes))
      }
      let text = try CBORUTF8.string(bytes, at: pos)
      pos += count
      return .text(text)

    case 4:
      try checkDepth(depth, start: start)
      if ai == 31 {
        var items: [CBORValue] = []
        while true {
          guard pos < end else {
            throw CBORError(offset: pos, reason: "truncated: indefinite-length array has no break")
          }
          if byte(at: pos) == 0xff { pos += 1; break }
          items.append(try parseItem(depth: depth + 1))
        }
        return .array(items)
      }
      let n = try argument(ai, major: major, start: start)
      guard n <= UInt64(remaining) else {
        throw CBORError(
          offset: start,
          reason: "truncated: array of \(n) items needs at least \(n) bytes, \(remaining) remain")
      }
      let count = Int(n)
      var items: [CBORValue] = []
      items.reserveCapacity(Swift.min(count, Self.maxReservation))
      for _ in 0..<count {
        items.append(try parseItem(depth: depth + 1))
      }
      return .array(items)

    case 5:
      try checkDepth(depth, start: start)
      if ai == 31 {
        var entries: [CBORMapEntry] = []
        while true {
          guard pos < end else {
            throw CBORError(offset: pos, reason: "truncated: indefinite-length map has no break")
          }
          if byte(at: pos) == 0xff { pos += 1; break }
          let key = try parseItem(depth: depth + 1)
          if pos < end && byte(at: pos) == 0xff {
            throw CBORError(offset: pos, reason: "break code after a map key that has no value")
          }
          let value = try parseItem(depth: depth + 1)
          entries.append(CBORMapEntry(key: key, value: value))
        }
        return .map(entries)
      }
      let n = try argument(ai, major: major, start: start)
      guard n <= UInt64(remaining / 2) else {
        throw CBORError(
          offset: start,
          reason: "truncated: map of \(n) pairs needs at least 2 bytes per pair, \(remaining) remain")
      }
      let count = Int(n)
      var entries: [CBORMapEntry] = []
      entries.reserveCapacity(Swift.min(count, Self.maxReservation))
      for _ in 0..<count {
        let key = try parseItem(depth: depth + 1)
        let value = try parseItem(depth: depth + 1)
        entries.append(CBORMapEntry(key: key, value: value))
      }
      return .map(entries)

    case 6:
      if ai == 31 {
        throw CBORError(offset: start, reason: "indefinite length not allowed for tag")
      }
      let tag = try argument(ai, major: major, start: start)
      try checkDepth(depth, start: start)
      return .tagged(tag, try parseItem(depth: depth + 1))

    default:
      return try parseSimple(ai, start: start)
    }
  }

  /// Validates a definite string length against the remaining input.
  @inline(__always)
  private func stringLength(_ n: UInt64, major: UInt8, start: Int) throws(CBORError) -> Int {
    guard n <= UInt64(remaining) else {
      throw CBORError(
        offset: start,
        reason: "truncated: \(Self.majorName(major)) of \(n) bytes needs \(n), \(remaining) remain")
    }
    return Int(n)
  }

  private mutating func parseIndefiniteString(major: UInt8, start: Int) throws(CBORError) -> CBORValue {
    var collected: [UInt8] = []
    let name = Self.majorName(major)
    while true {
      guard pos < end else {
        throw CBORError(offset: pos, reason: "truncated: indefinite-length \(name) has no break")
      }
      let chunkStart = pos
      let initial = byte(at: pos)
      if initial == 0xff { pos += 1; break }
      pos += 1
      let chunkMajor = initial >> 5
      let chunkAI = initial & 0x1f
      guard chunkMajor == major else {
        throw CBORError(
          offset: chunkStart,
          reason: "non-string chunk (\(Self.majorName(chunkMajor))) inside indefinite-length \(name)")
      }
      guard chunkAI != 31 else {
        throw CBORError(offset: chunkStart, reason: "nested indefinite-length chunk inside indefinite-length \(name)")
      }
      let n = try argument(chunkAI, major: major, start: chunkStart)
      let count = try stringLength(n, major: major, start: chunkStart)
      let chunk = UnsafeRawBufferPointer(start: base + pos, count: count)
      if major == 3, let bad = CBORUTF8.firstInvalidByte(chunk.assumingMemoryBound(to: UInt8.self)) {
        throw CBORError(offset: pos + bad, reason: "invalid UTF-8 in text string")
      }
      collected.append(contentsOf: chunk)
      pos += count
    }
    if major == 2 { return .bytes(collected) }
    return .text(String(decoding: collected, as: UTF8.self))
  }

  private mutating func parseSimple(_ ai: UInt8, start: Int) throws(CBORError) -> CBORValue {
    switch ai {
    case 0..<20:
      return .simple(ai)
    case 20: return .bool(false)
    case 21: return .bool(true)
    case 22: return .null
    case 23: return .undefined
    case 24:
      guard remaining >= 1 else {
        throw CBORError(offset: start, reason: "truncated: simple value needs 1 byte, 0 remain")
      }
      let n = byte(at: pos)
      guard n >= 32 else {
        throw CBORError(offset: start, reason: "invalid simple value \(n) in two-byte form")
      }
      pos += 1
      return .simple(n)
    case 25:
      guard remaining >= 2 else {
        throw CBORError(offset: start, reason: "truncated: half-precision float needs 2 bytes, \(remaining) remain")
      }
      let bits = UInt16(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt16.self))
      pos += 2
      return .float16(CBORHalf.float(from: bits))
    case 26:
      guard remaining >= 4 else {
        throw CBORError(offset: start, reason: "truncated: single-precision float needs 4 bytes, \(remaining) remain")
      }
      let bits = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt32.self))
      pos += 4
      return .float32(Float(bitPattern: bits))
    case 27:
      guard remaining >= 8 else {
        throw CBORError(offset: start, reason: "truncated: double-precision float needs 8 bytes, \(remaining) remain")
      }
      let bits = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: pos, as: UInt64.self))
      pos += 8
      return .float64(Double(bitPattern: bits))
    case 31:
      throw CBORError(offset: start, reason: "unexpected break code outside an indefinite-length item")
    default:
      throw CBORError(offset: start, reason: "reserved additional info \(ai)")
    }
  }
}
