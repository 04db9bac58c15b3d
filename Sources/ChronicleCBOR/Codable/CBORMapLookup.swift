import Foundation

/// Finds map entries for coding keys. Small maps are scanned linearly; larger
/// ones (e.g. decoded dictionaries) get this hash index, built once per container.
final class CBORMapLookup {
  private let byText: [String: Int]
  private let byInt: [Int: Int]

  static let linearLimit = 16

  init(_ entries: [CBORMapEntry]) {
    var byText: [String: Int] = [:]
    var byInt: [Int: Int] = [:]
    byText.reserveCapacity(entries.count)
    for (i, entry) in entries.enumerated() {
      switch entry.key {
      case .text(let s):
        if byText[s] == nil { byText[s] = i }
      case .unsigned(let n):
        let text = String(n)
        if byText[text] == nil { byText[text] = i }
        if let v = Int(exactly: n), byInt[v] == nil { byInt[v] = i }
      case .negative(let n):
        let text = CBORValue.negativeDecimal(n)
        if byText[text] == nil { byText[text] = i }
        if n <= UInt64(Int.max), byInt[-1 - Int(n)] == nil { byInt[-1 - Int(n)] = i }
      default:
        continue
      }
    }
    self.byText = byText
    self.byInt = byInt
  }

  func index(of key: some CodingKey) -> Int? {
    let textMatch = byText[key.stringValue]
    guard let intValue = key.intValue, let intMatch = byInt[intValue] else { return textMatch }
    guard let textMatch else { return intMatch }
    return min(textMatch, intMatch)
  }

  /// Whether the integer map key `entryKey` designates the coding key with
  /// these string and integer values.
  static func integerKeyMatches(_ entryKey: CBORValue, _ name: String, _ intValue: Int?) -> Bool {
    switch entryKey {
    case .unsigned(let n):
      if let i = intValue, i >= 0, UInt64(i) == n { return true }
      return String(n) == name
    case .negative(let n):
      if let i = intValue, i < 0, UInt64(-1 - i) == n { return true }
      return CBORValue.negativeDecimal(n) == name
    default:
      return false
    }
  }

  /// The coding key a map key designates: text by its string value, integers
  /// by their integer value (or their decimal text when the key type has no such
  /// integer key); `nil` for other keys.
  static func codingKey<Key: CodingKey>(for entryKey: CBORValue) -> Key? {
    switch entryKey {
    case .text(let s):
      return Key(stringValue: s)
    case .unsigned(let n):
      if let i = Int(exactly: n), let key = Key(intValue: i) { return key }
      return Key(stringValue: String(n))
    case .negative(let n):
      if n <= UInt64(Int.max), let key = Key(intValue: -1 - Int(n)) { return key }
      return Key(stringValue: CBORValue.negativeDecimal(n))
    default:
      return nil
    }
  }

  /// Index of the first entry of `entries` that designates `key` (linear scan).
  static func linearIndex(of key: some CodingKey, in entries: [CBORMapEntry]) -> Int? {
    let name = key.stringValue
    let intValue = key.intValue
    for i in entries.indices {
      switch entries[i].key {
      case .text(let s):
        if s == name { return i }
      case .unsigned, .negative:
        if integerKeyMatches(entries[i].key, name, intValue) { return i }
      default:
        continue
      }
    }
    return nil
  }
}
