import Foundation

/// A persistent linked list of coding keys, so that descending one level costs
/// one small allocation instead of copying the whole path.
indirect enum CBORCodingPath {
  case root
  case node(CBORCodingPath, any CodingKey)

  func appending(_ key: some CodingKey) -> CBORCodingPath {
    .node(self, key)
  }

  /// The path as the array `Encoder`/`Decoder` expose.
  var keys: [any CodingKey] {
    var result: [any CodingKey] = []
    var current = self
    while case .node(let parent, let key) = current {
      result.append(key)
      current = parent
    }
    result.reverse()
    return result
  }
}
