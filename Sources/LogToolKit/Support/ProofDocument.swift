import ChronicleLog
import Foundation

/// What `prove` writes and `audit` reads: one entry of a log, its inclusion proof in a tree, and
/// the signed checkpoint of that tree when there is one (docs/logtool.md, "Proof documents").
///
/// One JSON object, keys in this order: `chronicleProof` (1), `origin`, `seq`, `leafIndex`,
/// `treeSize`, `value` (the entry's stored value, base64), `leafHash`, `rootHash`, `proof`
/// (hex hashes, leaf to root), `checkpoint` (the signed note's text, or `null`).
struct ProofDocument: Equatable {
  /// The version `prove` writes and the newest `audit` reads.
  static let version = 1

  var origin: String?
  var seq: UInt64
  var leafIndex: UInt64
  var treeSize: UInt64
  var value: [UInt8]
  var leafHash: [UInt8]
  var rootHash: [UInt8]
  var proof: [[UInt8]]
  var checkpoint: String?

  /// The document as one line of JSON.
  var json: String {
    var out = JSONWriter()
    out.beginObject()
    out.field("chronicleProof", Self.version)
    out.key("origin")
    if let origin { out.string(origin) } else { out.null() }
    out.field("seq", seq)
    out.field("leafIndex", leafIndex)
    out.field("treeSize", treeSize)
    out.field("value", value.base64)
    out.field("leafHash", leafHash.hex)
    out.field("rootHash", rootHash.hex)
    out.key("proof")
    out.beginArray()
    for hash in proof { out.string(hash.hex) }
    out.endArray()
    out.key("checkpoint")
    if let checkpoint { out.string(checkpoint) } else { out.null() }
    out.endObject()
    return out.text
  }

  /// Reads a proof document from `path`, checking every field; exit 2 naming the file and the field.
  static func read(_ path: String, what: String) throws -> ProofDocument {
    let bytes = try TreeFiles.read(path, what: what)
    let file = TreeFiles.absolute(path)
    func bad(_ reason: String) -> LogToolError {
      LogToolError.badInput("\(file) is not a proof document (logtool prove --out writes them): \(reason)")
    }
    guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
      throw bad("it is not a JSON object")
    }
    guard let version = object["chronicleProof"] as? Int else { throw bad("it has no \"chronicleProof\" version") }
    guard version <= Self.version else {
      throw bad("proof document version \(version); this version reads \(Self.version) and older")
    }
    func number(_ key: String) throws -> UInt64 {
      guard !(object[key] is Bool), let value = object[key] as? NSNumber, let number = UInt64(value.stringValue) else {
        throw bad("\"\(key)\" is not a non-negative integer")
      }
      return number
    }
    func hash(_ text: Any?, _ key: String) throws -> [UInt8] {
      guard let text = text as? String, let bytes = [UInt8](hex: text), bytes.count == MerkleHash.size else {
        throw bad("\"\(key)\" is not a hash of 64 hexadecimal digits")
      }
      return bytes
    }
    guard let valueText = object["value"] as? String, let value = Data(base64Encoded: valueText) else {
      throw bad("\"value\" is not base64 of the entry's stored bytes")
    }
    guard let proofList = object["proof"] as? [Any] else { throw bad("\"proof\" is not a list of hashes") }
    let checkpoint = object["checkpoint"]
    guard checkpoint == nil || checkpoint is NSNull || checkpoint is String else {
      throw bad("\"checkpoint\" is neither a signed note's text nor null")
    }
    let seq = try number("seq")
    guard seq >= 1 else { throw bad("\"seq\" is 0: entries start at 1") }
    return ProofDocument(
      origin: object["origin"] as? String, seq: seq, leafIndex: try number("leafIndex"),
      treeSize: try number("treeSize"), value: Array(value), leafHash: try hash(object["leafHash"], "leafHash"),
      rootHash: try hash(object["rootHash"], "rootHash"),
      proof: try proofList.enumerated().map { try hash($0.element, "proof[\($0.offset)]") },
      checkpoint: checkpoint as? String)
  }
}
