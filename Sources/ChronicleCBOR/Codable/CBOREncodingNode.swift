import Foundation

/// The intermediate tree: containers must stay mutable until encoding ends,
/// and definite-length headers need the final counts.
enum CBOREncodingNode {
  case value(CBORValue)
  case array(CBORArrayBox)
  case map(CBORMapBox)
  /// The result of a `superEncoder()`, read when the tree is serialized.
  case deferred(CBOREncoderImpl)

  func write(into out: inout [UInt8]) {
    switch self {
    case .value(let value):
      value.write(into: &out)
    case .array(let box):
      CBORHead.head(4, UInt64(box.items.count), into: &out)
      for item in box.items { item.write(into: &out) }
    case .map(let box):
      CBORHead.head(5, UInt64(box.keys.count), into: &out)
      for i in box.keys.indices {
        CBORHead.text(box.keys[i], into: &out)
        box.values[i].write(into: &out)
      }
    case .deferred(let encoder):
      if let result = encoder.result {
        result.write(into: &out)
      } else {
        out.append(0xa0)
      }
    }
  }
}

/// Mutable storage of an unkeyed container.
final class CBORArrayBox {
  var items: [CBOREncodingNode] = []
}

/// Mutable storage of a keyed container: ordered keys, with replacement on re-encode.
final class CBORMapBox {
  private(set) var keys: [String] = []
  private(set) var values: [CBOREncodingNode] = []
  private var index: [String: Int]?

  private static let linearLimit = 16

  func set(_ key: String, _ node: CBOREncodingNode) {
    if let i = position(of: key) {
      values[i] = node
      return
    }
    keys.append(key)
    values.append(node)
    if index != nil {
      index![key] = keys.count - 1
    } else if keys.count > Self.linearLimit {
      var built: [String: Int] = [:]
      built.reserveCapacity(keys.count * 2)
      for (i, k) in keys.enumerated() where built[k] == nil { built[k] = i }
      index = built
    }
  }

  private func position(of key: String) -> Int? {
    if let index { return index[key] }
    return keys.firstIndex(of: key)
  }
}
