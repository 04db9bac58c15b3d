import Foundation

/// The `Encoder` handed to `encode(to:)`. One instance is reused for nested
/// values (its state is saved and restored around each one); only
/// `superEncoder()` creates a separate instance.
final class CBOREncoderImpl: Encoder {
  var path: CBORCodingPath
  var result: CBOREncodingNode?

  init(path: CBORCodingPath) {
    self.path = path
  }

  var codingPath: [any CodingKey] { path.keys }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// Encodes `value` (a type without a built-in mapping) at `path`.
  func encodeComplex<T: Encodable>(_ value: T, at path: CBORCodingPath) throws -> CBOREncodingNode {
    let savedPath = self.path
    let savedResult = self.result
    self.path = path
    self.result = nil
    defer {
      self.path = savedPath
      self.result = savedResult
    }
    try value.encode(to: self)
    return self.result ?? .map(CBORMapBox())
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let box: CBORMapBox
    if case .map(let existing)? = result {
      box = existing
    } else {
      box = CBORMapBox()
      result = .map(box)
    }
    return KeyedEncodingContainer(CBORKeyedEncodingContainer<Key>(impl: self, box: box, path: path))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let box: CBORArrayBox
    if case .array(let existing)? = result {
      box = existing
    } else {
      box = CBORArrayBox()
      result = .array(box)
    }
    return CBORUnkeyedEncodingContainer(impl: self, box: box, path: path)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    self
  }
}

extension CBOREncoderImpl: SingleValueEncodingContainer {
  func encodeNil() { result = .value(.null) }
  func encode(_ value: Bool) { result = .value(.bool(value)) }
  func encode(_ value: String) { result = .value(.text(value)) }
  func encode(_ value: Double) { result = .value(.float64(value)) }
  func encode(_ value: Float) { result = .value(.float32(value)) }
  func encode(_ value: Int) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int8) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int16) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int32) { result = .value(.integer(Int64(value))) }
  func encode(_ value: Int64) { result = .value(.integer(value)) }
  func encode(_ value: UInt) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt8) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt16) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt32) { result = .value(.unsigned(UInt64(value))) }
  func encode(_ value: UInt64) { result = .value(.unsigned(value)) }

  func encode<T: Encodable>(_ value: T) throws {
    if let special = CBORSpecialEncoding.value(of: value) {
      result = .value(special)
    } else {
      result = try encodeComplex(value, at: path)
    }
  }
}

// MARK: - Keyed container

struct CBORKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let impl: CBOREncoderImpl
  let box: CBORMapBox
  let path: CBORCodingPath

  var codingPath: [any CodingKey] { path.keys }

  mutating func encodeNil(forKey key: Key) { box.set(key.stringValue, .value(.null)) }
  mutating func encode(_ value: Bool, forKey key: Key) { box.set(key.stringValue, .value(.bool(value))) }
  mutating func encode(_ value: String, forKey key: Key) { box.set(key.stringValue, .value(.text(value))) }
  mutating func encode(_ value: Double, forKey key: Key) { box.set(key.stringValue, .value(.float64(value))) }
  mutating func encode(_ value: Float, forKey key: Key) { box.set(key.stringValue, .value(.float32(value))) }
  mutating func encode(_ value: Int, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int8, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int16, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int32, forKey key: Key) { box.set(key.stringValue, .value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int64, forKey key: Key) { box.set(key.stringValue, .value(.integer(value))) }
  mutating func encode(_ value: UInt, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt8, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt16, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt32, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt64, forKey key: Key) { box.set(key.stringValue, .value(.unsigned(value))) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    if let special = CBORSpecialEncoding.value(of: value) {
      box.set(key.stringValue, .value(special))
    } else {
      box.set(key.stringValue, try impl.encodeComplex(value, at: path.appending(key)))
    }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = CBORMapBox()
    box.set(key.stringValue, .map(nested))
    return KeyedEncodingContainer(
      CBORKeyedEncodingContainer<NestedKey>(impl: impl, box: nested, path: path.appending(key)))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested = CBORArrayBox()
    box.set(key.stringValue, .array(nested))
    return CBORUnkeyedEncodingContainer(impl: impl, box: nested, path: path.appending(key))
  }

  mutating func superEncoder() -> any Encoder {
    let encoder = CBOREncoderImpl(path: path.appending(CBORKey.super))
    box.set(CBORKey.super.stringValue, .deferred(encoder))
    return encoder
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    let encoder = CBOREncoderImpl(path: path.appending(key))
    box.set(key.stringValue, .deferred(encoder))
    return encoder
  }
}

// MARK: - Unkeyed container

struct CBORUnkeyedEncodingContainer: UnkeyedEncodingContainer {
  let impl: CBOREncoderImpl
  let box: CBORArrayBox
  let path: CBORCodingPath

  var codingPath: [any CodingKey] { path.keys }
  var count: Int { box.items.count }

  mutating func encodeNil() { box.items.append(.value(.null)) }
  mutating func encode(_ value: Bool) { box.items.append(.value(.bool(value))) }
  mutating func encode(_ value: String) { box.items.append(.value(.text(value))) }
  mutating func encode(_ value: Double) { box.items.append(.value(.float64(value))) }
  mutating func encode(_ value: Float) { box.items.append(.value(.float32(value))) }
  mutating func encode(_ value: Int) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int8) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int16) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int32) { box.items.append(.value(.integer(Int64(value)))) }
  mutating func encode(_ value: Int64) { box.items.append(.value(.integer(value))) }
  mutating func encode(_ value: UInt) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt8) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt16) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt32) { box.items.append(.value(.unsigned(UInt64(value)))) }
  mutating func encode(_ value: UInt64) { box.items.append(.value(.unsigned(value))) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    if let special = CBORSpecialEncoding.value(of: value) {
      box.items.append(.value(special))
    } else {
      let node = try impl.encodeComplex(value, at: path.appending(CBORKey(index: box.items.count)))
      box.items.append(node)
    }
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = CBORMapBox()
    let key = CBORKey(index: box.items.count)
    box.items.append(.map(nested))
    return KeyedEncodingContainer(
      CBORKeyedEncodingContainer<NestedKey>(impl: impl, box: nested, path: path.appending(key)))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let nested = CBORArrayBox()
    let key = CBORKey(index: box.items.count)
    box.items.append(.array(nested))
    return CBORUnkeyedEncodingContainer(impl: impl, box: nested, path: path.appending(key))
  }

  mutating func superEncoder() -> any Encoder {
    let encoder = CBOREncoderImpl(path: path.appending(CBORKey(index: box.items.count)))
    box.items.append(.deferred(encoder))
    return encoder
  }
}
