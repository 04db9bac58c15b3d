#if LogTool
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
  ///
  /// Decoded with `JSONDecoder` into typed fields: an integer is read exactly, 0 and 1 included
  /// (which `JSONSerialization` hands out as booleans' twins) and up to 2^64 − 1, and `true` is no number.
  static func read(_ path: String, what: String) throws -> ProofDocument {
    let bytes = try TreeFiles.read(path, what: what)
    let file = TreeFiles.absolute(path)
    func bad(_ reason: String) -> LogToolError {
      LogToolError.badInput("\(file) is not a proof document (logtool prove --out writes them): \(reason)")
    }
    struct Version: Decodable { var chronicleProof: Int }
    struct Fields: Decodable {
      var origin: String?
      var seq: UInt64
      var leafIndex: UInt64
      var treeSize: UInt64
      var value: String
      var leafHash: String
      var rootHash: String
      var proof: [String]
      var checkpoint: String?
    }
    let decoder = JSONDecoder()
    guard (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any] else {
      throw bad("it is not a JSON object")
    }
    guard let version = try? decoder.decode(Version.self, from: Data(bytes)).chronicleProof else {
      throw bad("it has no \"chronicleProof\" version")
    }
    guard version <= Self.version else {
      throw bad("proof document version \(version); this version reads \(Self.version) and older")
    }
    let fields: Fields
    do { fields = try decoder.decode(Fields.self, from: Data(bytes)) } catch let error as DecodingError {
      let key: String
      switch error {
      case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
        key = context.codingPath.first?.stringValue ?? ""
      case .keyNotFound(let missing, _):
        key = missing.stringValue
      @unknown default:
        key = ""
      }
      switch key {
      case "seq", "leafIndex", "treeSize": throw bad("\"\(key)\" is not a non-negative integer")
      case "value": throw bad("\"value\" is not base64 of the entry's stored bytes")
      case "leafHash", "rootHash": throw bad("\"\(key)\" is not a hash of 64 hexadecimal digits")
      case "proof": throw bad("\"proof\" is not a list of hashes")
      case "checkpoint": throw bad("\"checkpoint\" is neither a signed note's text nor null")
      case "origin": throw bad("\"origin\" is neither a checkpoint origin nor null")
      default: throw bad("\(error)")
      }
    }
    func hash(_ text: String, _ key: String) throws -> [UInt8] {
      guard let bytes = [UInt8](hex: text), bytes.count == MerkleHash.size else {
        throw bad("\"\(key)\" is not a hash of 64 hexadecimal digits")
      }
      return bytes
    }
    guard let value = Data(base64Encoded: fields.value) else {
      throw bad("\"value\" is not base64 of the entry's stored bytes")
    }
    guard fields.seq >= 1 else { throw bad("\"seq\" is 0: entries start at 1") }
    return ProofDocument(
      origin: fields.origin, seq: fields.seq, leafIndex: fields.leafIndex, treeSize: fields.treeSize,
      value: Array(value), leafHash: try hash(fields.leafHash, "leafHash"), rootHash: try hash(fields.rootHash, "rootHash"),
      proof: try fields.proof.enumerated().map { try hash($0.element, "proof[\($0.offset)]") },
      checkpoint: fields.checkpoint)
  }
}
#endif  // LogTool
