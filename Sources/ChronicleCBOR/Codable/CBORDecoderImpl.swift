import Foundation

/// The `Decoder` handed to `init(from:)`. One instance is reused for nested
/// values (its state is saved and restored around each one); only
/// `superDecoder()` creates a separate instance.
final class CBORDecoderImpl: Decoder {
  var value: CBORValue
  var path: CBORCodingPath

  init(value: CBORValue, path: CBORCodingPath) {
    self.value = value
    self.path = path
  }

  var codingPath: [any CodingKey] { path.keys }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// Decodes a type without a direct conversion from `value` at `path`.
  func decodeComplex<T: Decodable>(_ type: T.Type, from value: CBORValue, at path: CBORCodingPath) throws -> T {
    let savedValue = self.value
    let savedPath = self.path
    self.value = value
    self.path = path
    defer {
      self.value = savedValue
      self.path = savedPath
    }
    return try T(from: self)
  }

  func keyedContainer<Key: CodingKey>(
    _ keyType: Key.Type, for value: CBORValue, at path: CBORCodingPath
  ) throws -> KeyedDecodingContainer<Key> {
    guard case .map(let entries) = value else {
      if value.isNullLike {
        throw DecodingError.valueNotFound(
          KeyedDecodingContainer<Key>.self,
          .init(codingPath: path.keys, debugDescription: "Cannot get keyed decoding container -- found null instead."))
      }
      throw CBORUnbox.failure([String: Any].self, value, path.keys)
    }
    return KeyedDecodingContainer(CBORKeyedDecodingContainer<Key>(impl: self, entries: entries, path: path))
  }

  func unkeyedContainer(for value: CBORValue, at path: CBORCodingPath) throws -> any UnkeyedDecodingContainer {
    guard case .array(let items) = value else {
      if value.isNullLike {
        throw DecodingError.valueNotFound(
          (any UnkeyedDecodingContainer).self,
          .init(codingPath: path.keys, debugDescription: "Cannot get unkeyed decoding container -- found null instead."))
      }
      throw CBORUnbox.failure([Any].self, value, path.keys)
    }
    return CBORUnkeyedDecodingContainer(impl: self, items: items, path: path)
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    try keyedContainer(type, for: value, at: path)
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try unkeyedContainer(for: value, at: path)
  }

  func singleValueContainer() -> any SingleValueDecodingContainer {
    self
  }
}

extension CBORDecoderImpl: SingleValueDecodingContainer {
  func decodeNil() -> Bool { value.isNullLike }
  func decode(_ type: Bool.Type) throws -> Bool { try CBORUnbox.bool(value) { path } }
  func decode(_ type: String.Type) throws -> String { try CBORUnbox.string(value) { path } }
  func decode(_ type: Double.Type) throws -> Double { try CBORUnbox.double(value) { path } }
  func decode(_ type: Float.Type) throws -> Float { try CBORUnbox.float(value) { path } }
  func decode(_ type: Int.Type) throws -> Int { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int8.Type) throws -> Int8 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int16.Type) throws -> Int16 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int32.Type) throws -> Int32 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: Int64.Type) throws -> Int64 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt.Type) throws -> UInt { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try CBORUnbox.integer(type, value) { path } }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try CBORUnbox.integer(type, value) { path } }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let current = value
    let currentPath = path
    return try CBORUnbox.decode(type, from: current, impl: self) { currentPath }
  }
}

// MARK: - Keyed container

struct CBORKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let impl: CBORDecoderImpl
  let entries: [CBORMapEntry]
  let path: CBORCodingPath
  private let lookup: CBORMapLookup?

  init(impl: CBORDecoderImpl, entries: [CBORMapEntry], path: CBORCodingPath) {
    self.impl = impl
    self.entries = entries
    self.path = path
    self.lookup = entries.count > CBORMapLookup.linearLimit ? CBORMapLookup(entries) : nil
  }

  var codingPath: [any CodingKey] { path.keys }

  var allKeys: [Key] {
    var keys: [Key] = []
    keys.reserveCapacity(entries.count)
    for entry in entries {
      if let key: Key = CBORMapLookup.codingKey(for: entry.key) { keys.append(key) }
    }
    return keys
  }

  private func index(of key: some CodingKey) -> Int? {
    if let lookup { return lookup.index(of: key) }
    return CBORMapLookup.linearIndex(of: key, in: entries)
  }

  func contains(_ key: Key) -> Bool {
    index(of: key) != nil
  }

  private func value(for key: Key) throws -> CBORValue {
    guard let i = index(of: key) else {
      throw DecodingError.keyNotFound(
        key,
        .init(codingPath: path.keys, debugDescription: "No value associated with key \"\(key.stringValue)\"."))
    }
    return entries[i].value
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    try value(for: key).isNullLike
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try CBORUnbox.bool(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try CBORUnbox.string(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try CBORUnbox.double(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    try CBORUnbox.float(value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try CBORUnbox.integer(type, value(for: key)) { path.appending(key) }
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try CBORUnbox.decode(type, from: value(for: key), impl: impl) { path.appending(key) }
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let i = index(of: key) else { return nil }
    let found = entries[i].value
    if found.isNullLike { return nil }
    return try CBORUnbox.decode(type, from: found, impl: impl) { path.appending(key) }
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try impl.keyedContainer(type, for: value(for: key), at: path.appending(key))
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try impl.unkeyedContainer(for: value(for: key), at: path.appending(key))
  }

  func superDecoder() throws -> any Decoder {
    let found = index(of: CBORKey.super).map { entries[$0].value } ?? .null
    return CBORDecoderImpl(value: found, path: path.appending(CBORKey.super))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    let found = index(of: key).map { entries[$0].value } ?? .null
    return CBORDecoderImpl(value: found, path: path.appending(key))
  }
}

// MARK: - Unkeyed container

struct CBORUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let impl: CBORDecoderImpl
  let items: [CBORValue]
  let path: CBORCodingPath
  private(set) var currentIndex = 0

  init(impl: CBORDecoderImpl, items: [CBORValue], path: CBORCodingPath) {
    self.impl = impl
    self.items = items
    self.path = path
  }

  var codingPath: [any CodingKey] { path.keys }
  var count: Int? { items.count }
  var isAtEnd: Bool { currentIndex >= items.count }

  private func current(_ type: Any.Type) throws -> CBORValue {
    guard currentIndex < items.count else {
      throw DecodingError.valueNotFound(
        type,
        .init(
          codingPath: path.appending(CBORKey(index: currentIndex)).keys,
          debugDescription: "Unkeyed container is at end."))
    }
    return items[currentIndex]
  }

  private func elementPath() -> CBORCodingPath {
    path.appending(CBORKey(index: currentIndex))
  }

  private static func elementPath(_ path: CBORCodingPath, _ index: Int) -> CBORCodingPath {
    path.appending(CBORKey(index: index))
  }

  mutating func decodeNil() throws -> Bool {
    if try current(Any?.self).isNullLike {
      currentIndex += 1
      return true
    }
    return false
  }

  private mutating func next<V>(_ type: V.Type, _ unbox: (CBORValue, () -> CBORCodingPath) throws -> V) throws -> V {
    let item = try current(type)
    let path = self.path
    let index = currentIndex
    let result = try unbox(item) { Self.elementPath(path, index) }
    currentIndex += 1
    return result
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type, CBORUnbox.bool) }
  mutating func decode(_ type: String.Type) throws -> String { try next(type, CBORUnbox.string) }
  mutating func decode(_ type: Double.Type) throws -> Double { try next(type, CBORUnbox.double) }
  mutating func decode(_ type: Float.Type) throws -> Float { try next(type, CBORUnbox.float) }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try CBORUnbox.integer(type, $0, $1) } }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let impl = self.impl
    return try next(type) { try CBORUnbox.decode(type, from: $0, impl: impl, $1) }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    let item = try current(KeyedDecodingContainer<NestedKey>.self)
    let container = try impl.keyedContainer(type, for: item, at: elementPath())
    currentIndex += 1
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let item = try current((any UnkeyedDecodingContainer).self)
    let container = try impl.unkeyedContainer(for: item, at: elementPath())
    currentIndex += 1
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    let item = try current((any Decoder).self)
    let decoder = CBORDecoderImpl(value: item, path: elementPath())
    currentIndex += 1
    return decoder
  }
}
