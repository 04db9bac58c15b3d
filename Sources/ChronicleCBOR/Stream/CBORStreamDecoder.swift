import Foundation
import Synchronization

/// The fast path of ``CBORDecoder``: decodes straight from the bytes instead
/// of parsing them into a ``CBORValue`` tree first.
///
/// The input is validated as a whole first (``CBORParser/validate(_:)``), so
/// malformed bytes throw the same ``CBORError`` as before and the walk itself
/// needs no checks. Every conversion goes through ``CBORUnbox``, so results and
/// `DecodingError`s are the tree decoder's. Small definite-length maps and all
/// definite arrays are read in place; a value the stream does not handle
/// itself (an indefinite-length or large map, a tagged value, `superDecoder()`)
/// is parsed into a ``CBORValue`` and decoded by the tree decoder from there.
///
/// `position` and `path` opt out of dynamic exclusivity checks: one decoder
/// serves one `decode` call on one thread, and no access to them overlaps
/// another (none is held across a call into `init(from:)`).
final class CBORStreamDecoder: Decoder {
  /// A private copy of the input: containers that escape `init(from:)` stay valid.
  private let storage: UnsafeMutableRawBufferPointer
  var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }
  /// The item being decoded by the innermost `init(from:)`.
  @exclusivity(unchecked) var position = 0
  @exclusivity(unchecked) var path: CBORCodingPath = .root

  init(copying input: UnsafeRawBufferPointer) {
    storage = .allocate(byteCount: max(input.count, 1), alignment: 8)
    if let base = input.baseAddress { storage.baseAddress!.copyMemory(from: base, byteCount: input.count) }
  }

  deinit { storage.deallocate() }

  var codingPath: [any CodingKey] { path.keys }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  // MARK: - Items

  /// Whether the item at `position` is `null` or `undefined`.
  func isNullLike(at position: Int) -> Bool {
    let initial = bytes[position]
    return initial == 0xf6 || initial == 0xf7
  }

  /// The item at `position` as a value: directly for scalars, parsed for the rest.
  func value(at position: Int) -> CBORValue {
    let initial = bytes[position]
    let major = initial >> 5
    if major <= 3, initial & 0x1f != 31 {
      let (argument, next) = CBORSkip.head(bytes, at: position)
      switch major {
      case 0: return .unsigned(argument)
      case 1: return .negative(argument)
      case 2: return .bytes([UInt8](UnsafeRawBufferPointer(rebasing: bytes[next..<(next + Int(argument))])))
      default: return .text(CBORSkip.text(bytes, at: position))
      }
    }
    switch initial {
    case 0xf4: return .bool(false)
    case 0xf5: return .bool(true)
    case 0xf6: return .null
    case 0xf7: return .undefined
    case 0xfb:
      return .float64(Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: position + 1, as: UInt64.self))))
    default:
      // Validated already: the parse cannot fail.
      return (try? CBORParser.parse(bytes, item: position..<CBORSkip.end(of: bytes, at: position))) ?? .null
    }
  }

  /// Decodes a `T` from the item at `position`, whose path is `path`.
  func decode<T: Decodable>(_ type: T.Type, at position: Int, _ path: () -> CBORCodingPath) throws -> T {
    if let known = try CBORUnbox.known(type, from: value(at: position), path) { return known as! T }
    let saved = (self.position, self.path)
    self.position = position
    self.path = path()
    defer { (self.position, self.path) = saved }
    return try T(from: self)
  }

  /// The text string at `position` (the common case, without building a value), else the tree's conversion.
  func string(at position: Int, _ path: () -> CBORCodingPath) throws -> String {
    if bytes[position] >> 5 == 3, bytes[position] & 0x1f != 31 { return CBORSkip.text(bytes, at: position) }
    return try CBORUnbox.string(value(at: position), path)
  }

  /// The integer at `position`, as the tree converts it. Inlined, so that each caller gets the
  /// conversion for its own integer type (unspecialized, the generic conversion cost more than the
  /// rest of the decoding of the integer); a CBOR integer that fits is read without building a value.
  @inline(__always)
  func integer<I: FixedWidthInteger>(_ type: I.Type, at position: Int, _ path: () -> CBORCodingPath) throws -> I {
    let initial = bytes[position]
    // Majors 0 and 1 (initial bytes below 0x40) with a definite argument.
    if initial < 0x40, initial & 0x1f < 28 {
      let argument = CBORSkip.head(bytes, at: position).argument
      if initial < 0x20 {
        if let value = I(exactly: argument) { return value }
      } else if argument <= UInt64(Int64.max), let value = I(exactly: -1 - Int64(argument)) {
        return value
      }
    }
    return try CBORUnbox.integer(type, value(at: position), path)
  }

  // MARK: - Containers

  func keyedContainer<Key: CodingKey>(
    _ type: Key.Type, at position: Int, path: CBORCodingPath
  ) throws -> KeyedDecodingContainer<Key> {
    let initial = bytes[position]
    let (count, first) = CBORSkip.head(bytes, at: position)
    // Anything but a small definite-length map: the tree decoder (which also reports the mismatch).
    guard initial >> 5 == 5, initial & 0x1f != 31, count <= UInt64(CBORMapLookup.linearLimit) else {
      let value = value(at: position)
      return try CBORDecoderImpl(value: value, path: path).keyedContainer(type, for: value, at: path)
    }
    return KeyedDecodingContainer(
      CBORStreamKeyedDecodingContainer<Key>(decoder: self, first: first, count: Int(count), path: path))
  }

  func unkeyedContainer(at position: Int, path: CBORCodingPath) throws -> any UnkeyedDecodingContainer {
    let initial = bytes[position]
    guard initial >> 5 == 4, initial & 0x1f != 31 else {
      let value = value(at: position)
      return try CBORDecoderImpl(value: value, path: path).unkeyedContainer(for: value, at: path)
    }
    let (count, first) = CBORSkip.head(bytes, at: position)
    return CBORStreamUnkeyedDecodingContainer(decoder: self, next: first, count: Int(count), path: path)
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    try keyedContainer(type, at: position, path: path)
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try unkeyedContainer(at: position, path: path)
  }

  func singleValueContainer() -> any SingleValueDecodingContainer { self }

  /// A tree decoder for the item at `position` (for `superDecoder()`).
  func treeDecoder(at position: Int?, path: CBORCodingPath) -> any Decoder {
    CBORDecoderImpl(value: position.map(value(at:)) ?? .null, path: path)
  }
}

// MARK: - Single value

extension CBORStreamDecoder: SingleValueDecodingContainer {
  func decodeNil() -> Bool { isNullLike(at: position) }
  func decode(_ type: Bool.Type) throws -> Bool { try CBORUnbox.bool(value(at: position)) { path } }
  func decode(_ type: String.Type) throws -> String { try string(at: position) { path } }
  func decode(_ type: Double.Type) throws -> Double { try CBORUnbox.double(value(at: position)) { path } }
  func decode(_ type: Float.Type) throws -> Float { try CBORUnbox.float(value(at: position)) { path } }
  func decode(_ type: Int.Type) throws -> Int { try integer(type, at: position) { path } }
  func decode(_ type: Int8.Type) throws -> Int8 { try integer(type, at: position) { path } }
  func decode(_ type: Int16.Type) throws -> Int16 { try integer(type, at: position) { path } }
  func decode(_ type: Int32.Type) throws -> Int32 { try integer(type, at: position) { path } }
  func decode(_ type: Int64.Type) throws -> Int64 { try integer(type, at: position) { path } }
  func decode(_ type: UInt.Type) throws -> UInt { try integer(type, at: position) { path } }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type, at: position) { path } }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type, at: position) { path } }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type, at: position) { path } }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type, at: position) { path } }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let current = path
    return try decode(type, at: position) { current }
  }
}

// MARK: - Keyed container

/// A definite-length map of at most ``CBORMapLookup/linearLimit`` pairs, read in place.
struct CBORStreamKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: CBORStreamDecoder
  /// Offset of the first key.
  let first: Int
  let count: Int
  let path: CBORCodingPath

  var codingPath: [any CodingKey] { path.keys }

  var allKeys: [Key] {
    // A map of one text key (how `Codable` writes an enum case): the keys of the last maps of this
    // key type with that key are kept, since synthesized enum decoding asks for them every time.
    if count == 1, decoder.bytes[first] >> 5 == 3, decoder.bytes[first] & 0x1f != 31 {
      let (length, start) = CBORSkip.head(decoder.bytes, at: first)
      let text = UnsafeRawBufferPointer(rebasing: decoder.bytes[start..<(start + Int(length))])
      if let cached = CBORAllKeysCache.keys(of: Key.self, text: text) { return unsafeBitCast(cached, to: [Key].self) }
      let keys = scannedKeys
      CBORAllKeysCache.keep(unsafeBitCast(keys, to: AnyObject.self), of: Key.self, text: text)
      return keys
    }
    return scannedKeys
  }

  /// The keys of the map, read from its bytes.
  private var scannedKeys: [Key] {
    var keys: [Key] = []
    keys.reserveCapacity(count)
    var position = first
    for _ in 0..<count {
      let bytes = decoder.bytes
      let major = bytes[position] >> 5
      if major == 3 {
        if let key = Key(stringValue: CBORSkip.text(bytes, at: position)) { keys.append(key) }
      } else if major <= 1, let key: Key = CBORMapLookup.codingKey(for: decoder.value(at: position)) {
        keys.append(key)
      }
      position = CBORSkip.end(of: bytes, at: CBORSkip.end(of: bytes, at: position))
    }
    return keys
  }

  /// Offset of the value of the first pair whose key designates `key`.
  private func position(of key: some CodingKey) -> Int? {
    let bytes = decoder.bytes
    let name = key.stringValue
    let intValue = key.intValue
    var position = first
    for _ in 0..<count {
      let valueStart = CBORSkip.end(of: bytes, at: position)
      let major = bytes[position] >> 5
      if major == 3 {
        if CBORSkip.isText(bytes, at: position, equalTo: name) { return valueStart }
      } else if major <= 1, CBORMapLookup.integerKeyMatches(decoder.value(at: position), name, intValue) {
        return valueStart
      }
      position = CBORSkip.end(of: bytes, at: valueStart)
    }
    return nil
  }

  private func valuePosition(for key: Key) throws -> Int {
    guard let position = position(of: key) else {
      throw DecodingError.keyNotFound(
        key, .init(codingPath: path.keys, debugDescription: "No value associated with key \"\(key.stringValue)\"."))
    }
    return position
  }

  func contains(_ key: Key) -> Bool { position(of: key) != nil }

  func decodeNil(forKey key: Key) throws -> Bool { decoder.isNullLike(at: try valuePosition(for: key)) }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try CBORUnbox.bool(decoder.value(at: valuePosition(for: key))) { path.appending(key) }
  }

  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try decoder.string(at: valuePosition(for: key)) { path.appending(key) }
  }

  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try CBORUnbox.double(decoder.value(at: valuePosition(for: key))) { path.appending(key) }
  }

  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    try CBORUnbox.float(decoder.value(at: valuePosition(for: key))) { path.appending(key) }
  }

  /// The integer under `key`, as the tree decoder converts it.
  @inline(__always)
  private func integer<I: FixedWidthInteger>(_ type: I.Type, _ key: Key) throws -> I {
    try decoder.integer(type, at: valuePosition(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try decoder.decode(type, at: try valuePosition(for: key)) { path.appending(key) }
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let position = position(of: key), !decoder.isNullLike(at: position) else { return nil }
    return try decoder.decode(type, at: position) { path.appending(key) }
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try decoder.keyedContainer(type, at: try valuePosition(for: key), path: path.appending(key))
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try decoder.unkeyedContainer(at: try valuePosition(for: key), path: path.appending(key))
  }

  func superDecoder() throws -> any Decoder {
    decoder.treeDecoder(at: position(of: CBORKey.super), path: path.appending(CBORKey.super))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.treeDecoder(at: position(of: key), path: path.appending(key))
  }
}

// MARK: - Key cache

/// The `allKeys` arrays of single-pair maps, by coding key type and key text. Decoding an enum
/// through its synthesized `Codable` conformance asks for `allKeys` of a one-key map on every
/// value; answering from here skips the key's `String`, `init(stringValue:)` and the array.
enum CBORAllKeysCache {
  /// One cached answer: the key's UTF-8 text and the `[Key]` array (an array is one reference).
  struct Entry: @unchecked Sendable {
    // Sound: `keys` is an immutable array buffer, never written after it is cached, and only
    // read back as the `[Key]` of the type it is filed under.
    let text: [UInt8]
    let keys: AnyObject
  }

  /// At most this many texts per key type (an enum's cases), so foreign input cannot grow it without bound.
  static let limit = 64
  private static let entries = Mutex<[ObjectIdentifier: [Entry]]>([:])

  /// The cached keys of `type` for a map whose one key is `text`.
  static func keys(of type: Any.Type, text: UnsafeRawBufferPointer) -> AnyObject? {
    entries.withLock { entries in
      guard let list = entries[ObjectIdentifier(type)] else { return nil }
      for entry in list where entry.text.count == text.count {
        let equal = entry.text.withUnsafeBytes { stored in
          text.isEmpty || memcmp(stored.baseAddress!, text.baseAddress!, text.count) == 0
        }
        if equal { return entry.keys }
      }
      return nil
    }
  }

  /// Keeps `keys`, the `allKeys` of `type` for a map whose one key is `text`.
  static func keep(_ keys: AnyObject, of type: Any.Type, text: UnsafeRawBufferPointer) {
    let entry = Entry(text: [UInt8](text), keys: keys)
    entries.withLock { entries in
      let id = ObjectIdentifier(type)
      if entries[id, default: []].count < limit { entries[id, default: []].append(entry) }
    }
  }
}

// MARK: - Unkeyed container

/// A definite-length array, read in place.
struct CBORStreamUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let decoder: CBORStreamDecoder
  /// Offset of the next item.
  private var next: Int
  let count: Int?
  let path: CBORCodingPath
  private(set) var currentIndex = 0

  init(decoder: CBORStreamDecoder, next: Int, count: Int, path: CBORCodingPath) {
    self.decoder = decoder
    self.next = next
    self.count = count
    self.path = path
  }

  var codingPath: [any CodingKey] { path.keys }
  var isAtEnd: Bool { currentIndex >= count! }

  private func elementPath() -> CBORCodingPath { path.appending(CBORKey(index: currentIndex)) }

  /// The offset of the current item, or the tree decoder's error at the end.
  private func current(_ type: Any.Type) throws -> Int {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type, .init(codingPath: elementPath().keys, debugDescription: "Unkeyed container is at end."))
    }
    return next
  }

  private mutating func advance(past position: Int) {
    next = CBORSkip.end(of: decoder.bytes, at: position)
    currentIndex += 1
  }

  mutating func decodeNil() throws -> Bool {
    let position = try current(Any?.self)
    guard decoder.isNullLike(at: position) else { return false }
    advance(past: position)
    return true
  }

  /// Decodes the current item with `read` and moves past it.
  private mutating func next<V>(_ type: V.Type, _ read: (Int, () -> CBORCodingPath) throws -> V) throws -> V {
    let position = try current(type)
    let (path, index) = (self.path, currentIndex)
    let value = try read(position) { path.appending(CBORKey(index: index)) }
    advance(past: position)
    return value
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool {
    try next(type) { [decoder] in try CBORUnbox.bool(decoder.value(at: $0), $1) }
  }
  mutating func decode(_ type: String.Type) throws -> String { try next(type, decoder.string) }
  mutating func decode(_ type: Double.Type) throws -> Double {
    try next(type) { [decoder] in try CBORUnbox.double(decoder.value(at: $0), $1) }
  }
  mutating func decode(_ type: Float.Type) throws -> Float {
    try next(type) { [decoder] in try CBORUnbox.float(decoder.value(at: $0), $1) }
  }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { [decoder] in try decoder.integer(type, at: $0, $1) } }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try next(type) { [decoder] in try decoder.decode(type, at: $0, $1) }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let position = try current(KeyedDecodingContainer<NestedKey>.self)
    let container = try decoder.keyedContainer(type, at: position, path: elementPath())
    advance(past: position)
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let position = try current((any UnkeyedDecodingContainer).self)
    let container = try decoder.unkeyedContainer(at: position, path: elementPath())
    advance(past: position)
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    let position = try current((any Decoder).self)
    let decoder = decoder.treeDecoder(at: position, path: elementPath())
    advance(past: position)
    return decoder
  }
}
