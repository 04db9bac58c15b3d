import Foundation

/// Reads CBOR data items one after another, checking each against what the
/// caller expects: for ``CBORCodable/init(from:)``.
///
/// Every read checks its bounds and the item's type and throws a
/// ``CBORError`` naming the byte offset on a mismatch. Maps and arrays are read
/// as a header (``decodeMapHeader()``, ``expectMap(count:)``) followed by their
/// items. After a throw, the reader's position is unspecified.
public struct CBORReader {
  private let bytes: UnsafeRawBufferPointer
  /// The offset of the next item.
  public private(set) var offset = 0

  /// A reader at the start of `bytes`, which must outlive it.
  public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  /// Whether every byte has been read.
  public var isAtEnd: Bool { offset == bytes.count }

  /// An error at the current offset, for a value the caller cannot accept.
  public func error(_ reason: String) -> CBORError { CBORError(offset: offset, reason: reason) }

  /// Reads a definite-length map header and returns its number of pairs.
  public mutating func decodeMapHeader() throws -> Int {
    let pairs = try head(5, "a map")
    return try count(pairs, "map")
  }

  /// Reads a definite-length map header of exactly `count` pairs.
  public mutating func expectMap(count expected: Int) throws {
    let start = offset
    let count = try decodeMapHeader()
    guard count == expected else {
      throw CBORError(offset: start, reason: "expected a map of \(expected) pairs, found \(count)")
    }
  }

  /// Reads a definite-length array header and returns its number of items.
  public mutating func decodeArrayHeader() throws -> Int {
    let items = try head(4, "an array")
    return try count(items, "array")
  }

  /// Reads a text string that must equal `key` (a map key in the order the writer wrote it).
  public mutating func expectKey(_ key: String) throws {
    let start = offset
    let found = try take(try head(3, "the key \"\(key)\""))
    // The head and the bytes were checked in bounds above.
    guard CBORSkip.isText(bytes, at: start, equalTo: key) else {
      throw CBORError(
        offset: start, reason: "expected the key \"\(key)\", found \"\(String(decoding: found, as: UTF8.self))\"")
    }
  }

  /// Reads a text string (valid UTF-8).
  public mutating func decode(_: String.Type) throws -> String {
    let length = try head(3, "a text string")
    let start = offset
    return try CBORUTF8.string(try take(length), at: start)
  }

  /// Reads an integer that fits an `Int64`.
  public mutating func decode(_: Int64.Type) throws -> Int64 {
    let start = offset
    guard offset < bytes.count, bytes[offset] >> 5 <= 1 else { throw mismatch("an integer") }
    let negative = bytes[offset] >> 5 == 1
    let argument = try head(negative ? 1 : 0, "an integer")
    guard argument <= UInt64(Int64.max) else {
      throw CBORError(offset: start, reason: "integer out of range for Int64")
    }
    return negative ? -1 - Int64(argument) : Int64(argument)
  }

  /// Reads an integer that fits an `Int`.
  public mutating func decode(_: Int.Type) throws -> Int {
    let start = offset
    guard let value = Int(exactly: try decode(Int64.self)) else {
      throw CBORError(offset: start, reason: "integer out of range for Int")
    }
    return value
  }

  /// Reads an integer that fits `I` (for the widths without a `decode` of their own).
  public mutating func decodeInteger<I: FixedWidthInteger>(_: I.Type) throws -> I {
    let start = offset
    guard offset < bytes.count, bytes[offset] >> 5 <= 1 else { throw mismatch("an integer") }
    let negative = bytes[offset] >> 5 == 1
    let argument = try head(negative ? 1 : 0, "an integer")
    let value = negative ? (argument <= UInt64(Int64.max) ? I(exactly: -1 - Int64(argument)) : nil) : I(exactly: argument)
    guard let value else { throw CBORError(offset: start, reason: "integer out of range for \(I.self)") }
    return value
  }

  /// Reads a non-negative integer.
  public mutating func decode(_: UInt64.Type) throws -> UInt64 {
    try head(0, "an unsigned integer")
  }

  /// Reads `true` or `false`.
  public mutating func decode(_: Bool.Type) throws -> Bool {
    guard offset < bytes.count, bytes[offset] == 0xf4 || bytes[offset] == 0xf5 else { throw mismatch("a boolean") }
    offset += 1
    return bytes[offset - 1] == 0xf5
  }

  /// Reads a double- or single-precision float.
  public mutating func decode(_: Double.Type) throws -> Double {
    guard offset < bytes.count, bytes[offset] == 0xfb || bytes[offset] == 0xfa else { throw mismatch("a float") }
    let double = bytes[offset] == 0xfb
    let raw = try take(double ? 9 : 5)
    return double
      ? Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt64.self)))
      : Double(Float(bitPattern: UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt32.self))))
  }

  /// Reads a single-precision float, or a double-precision one that a `Float` holds exactly.
  public mutating func decode(_: Float.Type) throws -> Float {
    let start = offset
    guard offset < bytes.count, bytes[offset] == 0xfa || bytes[offset] == 0xfb else { throw mismatch("a float") }
    if bytes[offset] == 0xfa {
      let raw = try take(5)
      return Float(bitPattern: UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
    }
    let double = try decode(Double.self)
    guard let value = Float(exactly: double) else {
      throw CBORError(offset: start, reason: "float out of range for Float")
    }
    return value
  }

  /// Reads the key of the next pair of a map with `remaining` pairs left if it is `key`, and
  /// returns whether it did (for optional fields, which `Codable` leaves out when `nil`).
  public mutating func nextField(is key: String, _ remaining: inout Int) -> Bool {
    guard remaining > 0, offset < bytes.count, bytes[offset] >> 5 == 3 else { return false }
    let ai = bytes[offset] & 0x1f
    guard ai < 28, (ai < 24 ? 1 : 1 + 1 << (ai - 24)) <= bytes.count - offset else { return false }
    let (length, next) = CBORSkip.head(bytes, at: offset)
    guard length <= UInt64(bytes.count - next), CBORSkip.isText(bytes, at: offset, equalTo: key) else { return false }
    offset = next + Int(length)
    remaining -= 1
    return true
  }

  /// Reads `null` (or `undefined`) and returns `true`, or returns `false` and reads nothing.
  public mutating func decodeNil() -> Bool {
    guard offset < bytes.count, bytes[offset] == 0xf6 || bytes[offset] == 0xf7 else { return false }
    offset += 1
    return true
  }

  /// Reads one data item of any form as Chronicle's `PayloadCodec.cbor` does: for
  /// nested values and the parts of a value without a hand-written form.
  public mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let end = try CBORParser.end(of: bytes, at: offset)
    let value = try CBORCodableDispatch.decode(type, from: UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
    offset = end
    return value
  }

  /// Skips one data item of any form.
  public mutating func skip() throws {
    offset = try CBORParser.end(of: bytes, at: offset)
  }

  // MARK: - Heads

  /// Reads the head of a definite-length item of `major` type and returns its argument.
  private mutating func head(_ major: UInt8, _ expected: @autoclosure () -> String) throws(CBORError) -> UInt64 {
    guard offset < bytes.count, bytes[offset] >> 5 == major else { throw mismatch(expected()) }
    let ai = bytes[offset] & 0x1f
    if ai < 24 {
      offset += 1
      return UInt64(ai)
    }
    guard ai <= 27 else { throw mismatch("\(expected()) of definite length") }
    let size = 1 << (ai - 24)
    let raw = try take(1 + size)
    var argument: UInt64 = 0
    for index in 1...size { argument = argument << 8 | UInt64(raw[index]) }
    return argument
  }

  /// The next `count` bytes, read.
  private mutating func take(_ count: some BinaryInteger) throws(CBORError) -> UnsafeRawBufferPointer {
    guard count <= bytes.count - offset else {
      throw CBORError(offset: offset, reason: "truncated: \(count) bytes needed, \(bytes.count - offset) left")
    }
    let start = offset
    offset += Int(count)
    return UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
  }

  /// A container's count, which must fit the input left (each item takes at least a byte).
  private func count(_ argument: UInt64, _ kind: String) throws(CBORError) -> Int {
    guard argument <= UInt64(bytes.count - offset) else {
      throw CBORError(offset: offset, reason: "truncated: a \(kind) of \(argument) entries in \(bytes.count - offset) bytes")
    }
    return Int(argument)
  }

  /// A mismatch between what the caller expected and the next item.
  private func mismatch(_ expected: String) -> CBORError {
    guard offset < bytes.count else { return CBORError(offset: offset, reason: "truncated: expected \(expected)") }
    return CBORError(offset: offset, reason: "expected \(expected), found initial byte 0x\(String(bytes[offset], radix: 16))")
  }
}
