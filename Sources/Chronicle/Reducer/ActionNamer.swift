import ChronicleLog

/// Works out the type name recorded for each action: its
/// ``NamedAction/actionTypeName``; for an enum, the case's path (`increment`, `set`, and
/// in a composed app `todos.add`: a case whose only associated value is another enum
/// adds that enum's case, up to ``maxDepth`` names); for anything else the type's name.
///
/// Reflection is slow on the send path, so it runs once per action type (the first
/// action tells whether the type is an enum) and once per nested case path (whether
/// the case's only associated value is an enum). The names themselves are read from
/// the encoded payload, where Codable writes a case as a map of one pair from its name
/// to its associated values, an unlabelled single value under `_0`:
/// `{"todos":{"_0":{"add":{"_0":"milk"}}}}` in JSON, the same shape in CBOR.
@usableFromInline package struct ActionNamer<Action>: Sendable {
  /// The most case names a path holds (`app.todos.add.item`); deeper nesting is cut there.
  @usableFromInline static var maxDepth: Int { 4 }

  @usableFromInline let namesItself = Action.self is any NamedAction.Type
  /// Whether `Action` is an enum, once the first action was seen.
  @usableFromInline var isEnum: Bool?
  /// For each nested path read from a payload (`todos.edit.rename`), by a hash of its bytes:
  /// the path's bytes and the name recorded, its prefix of cases whose only associated
  /// value is an enum (worked out once, by reflection). Found again without allocating.
  @usableFromInline var nestedNames: [UInt64: [(path: [UInt8], name: String)]] = [:]
  /// The top-level case names read so far, with their bytes: found again by comparing bytes, without
  /// validating and building the text each time. At most ``maxCaseNames``; names past them are built.
  @usableFromInline var caseNames: [(bytes: [UInt8], name: String)] = []

  /// The most top-level case names kept in ``caseNames`` (an enum's cases; a scan of them is short).
  @usableFromInline static var maxCaseNames: Int { 64 }

  /// A namer that has seen no action yet.
  package init() {}

  /// The type name to record for `action`, whose encoding in `codec` is `payload`. The action is
  /// read only when the payload does not tell (it is not copied otherwise).
  @inlinable
  package mutating func name(of action: @autoclosure () -> Action, payload: [UInt8], codec: PayloadCodec) -> String {
    if namesItself, let named = action() as? any NamedAction { return named.actionTypeName }
    if isEnum == nil { isEnum = Mirror(reflecting: action()).displayStyle == .enum }
    guard isEnum == true else { return String(describing: Action.self) }
    let path = Self.casePath(payload, codec)
    guard path.count > 0, let first = caseName(payload, path[0]) else {
      let action = action()
      return Mirror(reflecting: action).children.first?.label ?? String(describing: action)
    }
    guard path.count > 1 else { return first }
    let action = action()
    let hash = Self.hash(payload, path)
    if let known = nestedNames[hash]?.first(where: { Self.path(payload, path, equals: $0.path) }) {
      return known.name
    }
    let name = Self.checkedName(of: action, payload: payload, path: path)
    nestedNames[hash, default: []].append((Self.joined(payload, path), name))
    return name
  }

  /// The case name in `payload[range]`, from ``caseNames`` when it was read before; `nil` if it is not UTF-8.
  @inlinable
  mutating func caseName(_ payload: [UInt8], _ range: Range<Int>) -> String? {
    let known = payload.withUnsafeBufferPointer { payload in
      let bytes = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: payload[range]))
      return caseNames.first { known in
        known.bytes.count == bytes.count && known.bytes.withUnsafeBytes { known in
          bytes.indices.allSatisfy { known[$0] == bytes[$0] }
        }
      }?.name
    }
    if let known { return known }
    guard let name = Self.text(payload[range]) else { return nil }
    if caseNames.count < Self.maxCaseNames { caseNames.append((Array(payload[range]), name)) }
    return name
  }

  /// The names of `path` joined with dots, as far as each case's only associated value is an
  /// enum (reflection on `action`: a tuple of values or a struct ends the path).
  @usableFromInline
  static func checkedName(of action: Action, payload: [UInt8], path: CasePath) -> String {
    let names = (0..<path.count).map { Self.text(payload[path[$0]]) ?? "" }
    var count = 1
    while count < names.count, associatedEnum(of: action, along: names.prefix(count)) != nil { count += 1 }
    return names.prefix(count).joined(separator: ".")
  }

  /// Follows `cases` down `value` with reflection: the single associated value of the last
  /// case, if it is an enum (`nil` if a case does not match or holds something else).
  @usableFromInline
  static func associatedEnum(of value: Action, along cases: ArraySlice<String>) -> Any? {
    var current: Any = value
    for name in cases {
      let mirror = Mirror(reflecting: current)
      guard mirror.displayStyle == .enum, let child = mirror.children.first, child.label == name else { return nil }
      // One unlabelled associated value is the child's value itself; several make a tuple.
      guard Mirror(reflecting: child.value).displayStyle == .enum else { return nil }
      current = child.value
    }
    return current
  }

  /// Where the case names are in a payload: up to ``maxDepth`` byte ranges, without allocating.
  @usableFromInline
  struct CasePath {
    @usableFromInline var count = 0
    @usableFromInline var ranges: (Range<Int>, Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0, 0..<0)

    @usableFromInline init() {}

    @usableFromInline
    subscript(index: Int) -> Range<Int> {
      switch index {
      case 0: ranges.0
      case 1: ranges.1
      case 2: ranges.2
      default: ranges.3
      }
    }

    mutating func append(_ range: Range<Int>) {
      switch count {
      case 0: ranges.0 = range
      case 1: ranges.1 = range
      case 2: ranges.2 = range
      default: ranges.3 = range
      }
      count += 1
    }
  }

  /// The bytes of the names of `path`, each followed by a zero byte.
  @usableFromInline
  static func joined(_ payload: [UInt8], _ path: CasePath) -> [UInt8] {
    var bytes: [UInt8] = []
    for index in 0..<path.count {
      bytes.append(contentsOf: payload[path[index]])
      bytes.append(0)
    }
    return bytes
  }

  /// Whether the names of `path` are `joined` (as ``joined(_:_:)`` lays them out).
  @usableFromInline
  static func path(_ payload: [UInt8], _ path: CasePath, equals joined: [UInt8]) -> Bool {
    var offset = 0
    for index in 0..<path.count {
      let range = path[index]
      guard offset + range.count < joined.count, joined[offset + range.count] == 0,
        joined[offset..<(offset + range.count)].elementsEqual(payload[range])
      else { return false }
      offset += range.count + 1
    }
    return offset == joined.count
  }

  /// FNV-1a over the names of `path`, each followed by a zero byte.
  @usableFromInline
  static func hash(_ payload: [UInt8], _ path: CasePath) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for index in 0..<path.count {
      for byte in payload[path[index]] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
      hash = (hash ^ 0) &* 0x100_0000_01b3
    }
    return hash
  }

  // MARK: - Reading names from the payload

  /// Where the case names are in the payload: the key of the top map of one pair, then,
  /// while the value is a map of one pair `_0` whose value is again a map of one pair with a
  /// map value, that map's key; at most ``maxDepth`` names. Empty when the payload does not
  /// start with a map of one text key.
  @usableFromInline
  static func casePath(_ payload: [UInt8], _ codec: PayloadCodec) -> CasePath {
    switch codec {
    case .cbor: cborPath(payload)
    case .json: jsonPath(payload)
    }
  }

  /// The first key of a map whose key is a short text (kept for callers that need only the case).
  @usableFromInline
  static func caseKey(_ payload: [UInt8], _ codec: PayloadCodec) -> String? {
    let path = casePath(payload, codec)
    return path.count > 0 ? text(payload[path[0]]) : nil
  }

  /// `A1` (a map of one pair), a text key; then `A1 62 5F 30` (`{"_0": …}`), `A1`, a text key,
  /// and a map header, for each nested level.
  static func cborPath(_ payload: [UInt8]) -> CasePath {
    var path = CasePath()
    guard let (first, afterFirst) = cborSingleKey(payload, at: 0) else { return path }
    path.append(first)
    var index = afterFirst
    while path.count < maxDepth {
      // {"_0": {"name": {…}}}
      guard index + 4 <= payload.count, payload[index] == 0xA1, payload[index + 1] == 0x62,
        payload[index + 2] == UInt8(ascii: "_"), payload[index + 3] == UInt8(ascii: "0"),
        let (name, afterName) = cborSingleKey(payload, at: index + 4),
        afterName < payload.count, payload[afterName] >> 5 == 5  // major type 5: a map
      else { break }
      path.append(name)
      index = afterName
    }
    return path
  }

  /// At `index`, a map of one pair (`A1`) whose key is a text of fewer than 256 bytes:
  /// the key and the index of the value after it.
  private static func cborSingleKey(_ payload: [UInt8], at index: Int) -> (Range<Int>, Int)? {
    guard index + 2 < payload.count, payload[index] == 0xA1 else { return nil }
    let header = payload[index + 1]
    let count: Int
    let start: Int
    switch header {
    case 0x60..<0x78:
      count = Int(header - 0x60)
      start = index + 2
    case 0x78:
      count = Int(payload[index + 2])
      start = index + 3
    default:
      return nil
    }
    guard start + count < payload.count else { return nil }
    return (start..<(start + count), start + count)
  }

  /// `{"name":` (the existing top level; the value is not checked), then `{"_0":{"name":{`
  /// for each nested level. Codable's JSON has no white space; anything else stops the path.
  static func jsonPath(_ payload: [UInt8]) -> CasePath {
    var path = CasePath()
    guard let (first, afterFirst) = jsonKey(payload, at: 0) else { return path }
    path.append(first)
    var index = afterFirst
    while path.count < maxDepth {
      // {"_0":
      guard index + 6 < payload.count, payload[index] == UInt8(ascii: "{"), payload[index + 1] == UInt8(ascii: "\""),
        payload[index + 2] == UInt8(ascii: "_"), payload[index + 3] == UInt8(ascii: "0"),
        payload[index + 4] == UInt8(ascii: "\""), payload[index + 5] == UInt8(ascii: ":"),
        let (name, afterName) = jsonKey(payload, at: index + 6),
        afterName < payload.count, payload[afterName] == UInt8(ascii: "{")
      else { break }
      path.append(name)
      index = afterName
    }
    return path
  }

  /// At `index`, `{"key":` with a key free of escapes: the key and the index after the colon.
  private static func jsonKey(_ payload: [UInt8], at index: Int) -> (Range<Int>, Int)? {
    guard index + 4 < payload.count, payload[index] == UInt8(ascii: "{"), payload[index + 1] == UInt8(ascii: "\"")
    else { return nil }
    let start = index + 2
    guard let end = payload[start...].firstIndex(of: UInt8(ascii: "\"")), end + 1 < payload.count,
      payload[end + 1] == UInt8(ascii: ":"), !payload[start..<end].contains(UInt8(ascii: "\\"))
    else { return nil }
    return (start..<end, end + 2)
  }

  /// The UTF-8 text in `bytes`, or `nil` if it is not valid (ASCII, the common case, skips the generic validation).
  @usableFromInline
  static func text(_ bytes: ArraySlice<UInt8>) -> String? {
    bytes.allSatisfy { $0 < 0x80 } ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
  }
}
