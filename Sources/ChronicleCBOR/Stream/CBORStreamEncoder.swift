import Foundation

/// The fast path of ``CBOREncoder``: writes CBOR straight into one byte array
/// while `encode(to:)` runs, instead of building a tree first.
///
/// It produces exactly the bytes the tree encoder (``CBOREncoderImpl``)
/// produces. Definite-length headers are patched in place as entries arrive (a
/// header that outgrows its byte moves the container's bytes once, at 24, 256
/// and 65,536 entries). What a stream cannot express, it hands back to the tree
/// encoder: a key encoded twice (the tree replaces the first value), a
/// container written after a sibling or its parent moved on, a second
/// container or value for one item, `superEncoder()`. Those set
/// ``needsTree``, the stream stops writing, and ``CBOREncoder`` encodes the
/// value again with the tree encoder.
///
/// Its stored properties opt out of dynamic exclusivity checks (a fifth of the
/// encoding time otherwise): one encoder serves one `encode` call on one
/// thread, and no access to a property overlaps another (none is held across a
/// call into `encode(to:)`).
final class CBORStreamEncoder: Encoder {
  @exclusivity(unchecked) private(set) var out: [UInt8] = []
  /// Set when the value used a form only the tree encoder supports.
  @exclusivity(unchecked) private(set) var needsTree = false
  @exclusivity(unchecked) var path: CBORCodingPath = .root

  /// What the item being encoded (by the innermost `encode(to:)`) has produced so far.
  private enum Item {
    case empty
    case single
    case container(id: Int)
  }

  /// A container whose entries may still arrive. Containers close (leave the
  /// stack) when an entry is written to one of their ancestors.
  private struct Open {
    var id: Int
    var header: Int
    var count: Int
    var isMap: Bool
  }

  private static let linearLimit = 16
  @exclusivity(unchecked) private var item = Item.empty
  @exclusivity(unchecked) private var stack: [Open] = []
  /// Keys of the open maps with more than `linearLimit` entries, by container id: repeats are found without a scan.
  @exclusivity(unchecked) private var keySets: [Int: Set<String>] = [:]
  @exclusivity(unchecked) private var nextID = 0

  init() {
    out.reserveCapacity(128)
  }

  var codingPath: [any CodingKey] { path.keys }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// Asks for the tree encoder; nothing written from now on matters.
  func fallBack() { needsTree = true }

  // MARK: - Values

  /// Writes `value`, a type with or without a built-in mapping, at `path`.
  func write<T: Encodable>(_ value: T, at path: CBORCodingPath) throws {
    if let special = CBORSpecialEncoding.value(of: value) {
      special.write(into: &out)
      return
    }
    let saved = (self.path, item, stack.count)
    self.path = path
    item = .empty
    defer {
      self.path = saved.0
      item = saved.1
    }
    try value.encode(to: self)
    if case .empty = item { out.append(0xa0) }
    // Containers of this value are complete.
    close(from: saved.2)
  }

  // MARK: - Containers

  /// The container of the item being encoded: opened now, or the one it already has.
  private func open(isMap: Bool) -> Int? {
    switch item {
    case .empty:
      let id = openNested(isMap: isMap)
      item = .container(id: id)
      return id
    case .container(let id) where stack.last?.id == id && stack.last?.isMap == isMap:
      return id
    default:
      fallBack()
      return nil
    }
  }

  /// Opens a container at the end of the output (for a nested one: after its
  /// parent's ``beginEntry(of:key:)`` wrote the key, if any), and returns its id.
  func openNested(isMap: Bool) -> Int {
    nextID += 1
    stack.append(Open(id: nextID, header: out.count, count: 0, isMap: isMap))
    out.append(isMap ? 0xa0 : 0x80)
    return nextID
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(CBORStreamKeyedEncodingContainer<Key>(encoder: self, id: open(isMap: true), path: path))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    CBORStreamUnkeyedEncodingContainer(encoder: self, id: open(isMap: false), path: path)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer { self }

  /// Starts the next entry of container `id`: closes the containers opened
  /// after it, counts the entry, and for a map writes `key` (checking it is
  /// new). Returns `false` (after asking for the tree) if the stream cannot.
  func beginEntry(of id: Int?, key: String?) -> Bool {
    var index = stack.count - 1
    while index >= 0, stack[index].id != id { index -= 1 }
    guard !needsTree, index >= 0 else {
      fallBack()
      return false
    }
    close(from: index + 1)
    if let key {
      guard isNewKey(key, in: index) else {
        fallBack()
        return false
      }
    }
    stack[index].count += 1
    patchHeader(of: index)
    if let key { CBORHead.text(key, into: &out) }
    return true
  }

  /// Closes the containers at `index` and above in the stack.
  private func close(from index: Int) {
    guard index < stack.count else { return }
    if !keySets.isEmpty {
      for open in stack[index...] { keySets[open.id] = nil }
    }
    stack.removeSubrange(index...)
  }

  /// Entries of container `id` so far.
  func count(of id: Int?) -> Int {
    stack.last(where: { $0.id == id })?.count ?? 0
  }

  private func isNewKey(_ key: String, in index: Int) -> Bool {
    let count = stack[index].count
    if count == 0 { return true }
    if count < Self.linearLimit {
      // Scan the keys written so far, skipping their values.
      var position = stack[index].header + CBORSkip.headerSize(count)
      return out.withUnsafeBytes { bytes in
        for _ in 0..<count {
          let keyEnd = CBORSkip.end(of: bytes, at: position)
          if CBORSkip.isText(bytes, at: position, equalTo: key) { return false }
          position = CBORSkip.end(of: bytes, at: keyEnd)
        }
        return true
      }
    }
    let id = stack[index].id
    if keySets[id] == nil {
      var keys = Set<String>()
      var position = stack[index].header + CBORSkip.headerSize(count)
      out.withUnsafeBytes { bytes in
        for _ in 0..<count {
          let keyEnd = CBORSkip.end(of: bytes, at: position)
          keys.insert(CBORSkip.text(bytes, at: position))
          position = CBORSkip.end(of: bytes, at: keyEnd)
        }
      }
      keySets[id] = keys
    }
    return keySets[id]!.insert(key).inserted
  }

  /// Rewrites the header of `stack[index]` for its new count, widening it when needed.
  private func patchHeader(of index: Int) {
    let open = stack[index]
    let initial: UInt8 = open.isMap ? 0xa0 : 0x80
    guard open.count >= 24 else {
      out[open.header] = initial | UInt8(open.count)
      return
    }
    let size = CBORSkip.headerSize(open.count)
    let grow = size - CBORSkip.headerSize(open.count - 1)
    if grow > 0 { out.insert(contentsOf: repeatElement(0, count: grow), at: open.header + 1) }
    let info: UInt8 = size == 2 ? 24 : size == 3 ? 25 : size == 5 ? 26 : 27
    out[open.header] = initial | info
    var argument = UInt64(open.count)
    for i in stride(from: size - 1, through: 1, by: -1) {
      out[open.header + i] = UInt8(truncatingIfNeeded: argument)
      argument >>= 8
    }
  }
}

// MARK: - Single value

extension CBORStreamEncoder: SingleValueEncodingContainer {
  private func single(_ value: CBORValue) {
    guard !needsTree, case .empty = item else { return fallBack() }
    value.write(into: &out)
    item = .single
  }

  func encodeNil() { single(.null) }
  func encode(_ value: Bool) { single(.bool(value)) }
  func encode(_ value: String) { single(.text(value)) }
  func encode(_ value: Double) { single(.float64(value)) }
  func encode(_ value: Float) { single(.float32(value)) }
  func encode(_ value: Int) { single(.integer(Int64(value))) }
  func encode(_ value: Int8) { single(.integer(Int64(value))) }
  func encode(_ value: Int16) { single(.integer(Int64(value))) }
  func encode(_ value: Int32) { single(.integer(Int64(value))) }
  func encode(_ value: Int64) { single(.integer(value)) }
  func encode(_ value: UInt) { single(.unsigned(UInt64(value))) }
  func encode(_ value: UInt8) { single(.unsigned(UInt64(value))) }
  func encode(_ value: UInt16) { single(.unsigned(UInt64(value))) }
  func encode(_ value: UInt32) { single(.unsigned(UInt64(value))) }
  func encode(_ value: UInt64) { single(.unsigned(value)) }

  func encode<T: Encodable>(_ value: T) throws {
    guard !needsTree, case .empty = item else { return fallBack() }
    try write(value, at: path)
    item = .single
  }
}

// MARK: - Keyed container

struct CBORStreamKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoder: CBORStreamEncoder
  let id: Int?
  let path: CBORCodingPath

  var codingPath: [any CodingKey] { path.keys }

  private func put(_ value: CBORValue, _ key: Key) {
    guard encoder.beginEntry(of: id, key: key.stringValue) else { return }
    encoder.write(value)
  }

  mutating func encodeNil(forKey key: Key) { put(.null, key) }
  mutating func encode(_ value: Bool, forKey key: Key) { put(.bool(value), key) }
  mutating func encode(_ value: String, forKey key: Key) {
    // Written directly: the same bytes as `.text(value)`, without the value in between.
    guard encoder.beginEntry(of: id, key: key.stringValue) else { return }
    encoder.writeText(value)
  }
  mutating func encode(_ value: Double, forKey key: Key) { put(.float64(value), key) }
  mutating func encode(_ value: Float, forKey key: Key) { put(.float32(value), key) }
  mutating func encode(_ value: Int, forKey key: Key) {
    // Written directly: the same bytes as `.integer(Int64(value))`, without the value in between.
    guard encoder.beginEntry(of: id, key: key.stringValue) else { return }
    encoder.writeInt(Int64(value))
  }
  mutating func encode(_ value: Int8, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int16, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int32, forKey key: Key) { put(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int64, forKey key: Key) { put(.integer(value), key) }
  mutating func encode(_ value: UInt, forKey key: Key) { put(.unsigned(UInt64(value)), key) }
  mutating func encode(_ value: UInt8, forKey key: Key) { put(.unsigned(UInt64(value)), key) }
  mutating func encode(_ value: UInt16, forKey key: Key) { put(.unsigned(UInt64(value)), key) }
  mutating func encode(_ value: UInt32, forKey key: Key) { put(.unsigned(UInt64(value)), key) }
  mutating func encode(_ value: UInt64, forKey key: Key) { put(.unsigned(value), key) }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    guard encoder.beginEntry(of: id, key: key.stringValue) else { return }
    try encoder.write(value, at: path.appending(key))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = encoder.beginEntry(of: id, key: key.stringValue) ? encoder.openNested(isMap: true) : nil
    return KeyedEncodingContainer(
      CBORStreamKeyedEncodingContainer<NestedKey>(encoder: encoder, id: nested, path: path.appending(key)))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested = encoder.beginEntry(of: id, key: key.stringValue) ? encoder.openNested(isMap: false) : nil
    return CBORStreamUnkeyedEncodingContainer(encoder: encoder, id: nested, path: path.appending(key))
  }

  mutating func superEncoder() -> any Encoder {
    encoder.fallBack()
    return encoder
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    encoder.fallBack()
    return encoder
  }
}

// MARK: - Unkeyed container

struct CBORStreamUnkeyedEncodingContainer: UnkeyedEncodingContainer {
  let encoder: CBORStreamEncoder
  let id: Int?
  let path: CBORCodingPath

  var codingPath: [any CodingKey] { path.keys }
  var count: Int { encoder.count(of: id) }

  private func put(_ value: CBORValue) {
    guard encoder.beginEntry(of: id, key: nil) else { return }
    encoder.write(value)
  }

  mutating func encodeNil() { put(.null) }
  mutating func encode(_ value: Bool) { put(.bool(value)) }
  mutating func encode(_ value: String) { put(.text(value)) }
  mutating func encode(_ value: Double) { put(.float64(value)) }
  mutating func encode(_ value: Float) { put(.float32(value)) }
  mutating func encode(_ value: Int) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int8) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int16) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int32) { put(.integer(Int64(value))) }
  mutating func encode(_ value: Int64) { put(.integer(value)) }
  mutating func encode(_ value: UInt) { put(.unsigned(UInt64(value))) }
  mutating func encode(_ value: UInt8) { put(.unsigned(UInt64(value))) }
  mutating func encode(_ value: UInt16) { put(.unsigned(UInt64(value))) }
  mutating func encode(_ value: UInt32) { put(.unsigned(UInt64(value))) }
  mutating func encode(_ value: UInt64) { put(.unsigned(value)) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    let index = count
    guard encoder.beginEntry(of: id, key: nil) else { return }
    try encoder.write(value, at: path.appending(CBORKey(index: index)))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  ) -> KeyedEncodingContainer<NestedKey> {
    let key = CBORKey(index: count)
    let nested = encoder.beginEntry(of: id, key: nil) ? encoder.openNested(isMap: true) : nil
    return KeyedEncodingContainer(
      CBORStreamKeyedEncodingContainer<NestedKey>(encoder: encoder, id: nested, path: path.appending(key)))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let key = CBORKey(index: count)
    let nested = encoder.beginEntry(of: id, key: nil) ? encoder.openNested(isMap: false) : nil
    return CBORStreamUnkeyedEncodingContainer(encoder: encoder, id: nested, path: path.appending(key))
  }

  mutating func superEncoder() -> any Encoder {
    encoder.fallBack()
    return encoder
  }
}

extension CBORStreamEncoder {
  /// Writes a value with a fixed form.
  func write(_ value: CBORValue) { value.write(into: &out) }

  /// Writes a text string (the bytes of ``CBORValue/text(_:)``).
  func writeText(_ value: String) { CBORHead.text(value, into: &out) }

  /// Writes an integer (the bytes of ``CBORValue/integer(_:)``).
  func writeInt(_ value: Int64) { CBORHead.int(value, into: &out) }
}
