import Foundation
import ChronicleLMDB

// MARK: - The format

/// The JSON Lines layout of an export. `docs/logtool.md` is the specification.
enum ExportFormat {
  struct Plan {
    var range: ClosedRange<UInt64>?
    var entries: Int
    var snapshots: [UInt64]
    var head: ChainAnchor
    /// The log's identifier (`nil` for a log that has none yet).
    var logID: [UInt8]? = nil
    /// The stored tree hashes wholly left of the anchor, in key order.
    var tree: [(TreeStorage.Node, [UInt8])] = []
    /// The stored checkpoints the exported entries produce (size up to the head), by size.
    var checkpoints: [(size: UInt64, note: [UInt8])] = []
  }

  /// The export format version an export of a log with meta `format` `formatVersion` is written
  /// in: ``ActionLog/encryptedExportFormatVersion`` for an encrypted log (its entry lines carry
  /// the stored ciphertext), ``ActionLog/exportFormatVersion`` otherwise, so older versions still
  /// read an export of a log in the clear.
  static func version(forLogFormat formatVersion: UInt32) -> Int {
    formatVersion >= ActionLog.encryptedFormatVersion
      ? ActionLog.encryptedExportFormatVersion : ActionLog.exportFormatVersion
  }

  /// A short reason for a line that did not decode.
  static func describe(_ error: any Error) -> String {
    func field(_ path: [any CodingKey]) -> String { path.map(\.stringValue).joined(separator: ".") }
    switch error as? DecodingError {
    case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
      return "'\(field(context.codingPath))' has the wrong type or is out of range"
    case .dataCorrupted(let context)? where !context.codingPath.isEmpty:
      return "'\(field(context.codingPath))' has the wrong type or is out of range"
    default:
      return "not a valid JSON object"
    }
  }

  static func writeHeader(meta: LogMeta, plan: Plan, into out: inout JSONWriter) {
    out.beginObject()
    out.field("chronicleExport", version(forLogFormat: meta.formatVersion))
    out.field("formatVersion", Int(meta.formatVersion))
    out.field("appID", meta.appID)
    out.field("schemaVersion", Int(meta.schemaVersion))
    out.field("created", Int(meta.created))
    out.field("createdTime", ISOTime.string(micros: meta.created))
    writeAnchor("anchor", meta.anchor, into: &out)
    out.field("entries", plan.entries)
    if let range = plan.range {
      out.field("first", range.lowerBound)
      out.field("last", range.upperBound)
    }
    out.key("snapshots")
    out.beginArray()
    for seq in plan.snapshots { out.uint(seq) }
    out.endArray()
    writeAnchor("head", plan.head, into: &out)
    if let logID = plan.logID { out.field("logID", logID.hex) }
    out.field("tree", plan.tree.count)
    out.key("checkpoints")
    out.beginArray()
    for checkpoint in plan.checkpoints { out.uint(checkpoint.size) }
    out.endArray()
    out.endObject()
    out.newline()
  }

  /// A stored tree hash left of the anchor: `{"record":"tree","level":L,"index":I,"hash":"…"}`.
  static func writeTree(_ node: TreeStorage.Node, hash: [UInt8], into out: inout JSONWriter) {
    out.beginObject()
    out.field("record", "tree")
    out.field("level", node.level)
    out.field("index", node.index)
    out.field("hash", hash.hex)
    out.endObject()
    out.newline()
  }

  /// A stored checkpoint: `{"record":"checkpoint","size":N,"note":"<the signed note's text>"}`.
  static func writeCheckpoint(size: UInt64, note: [UInt8], into out: inout JSONWriter) {
    out.beginObject()
    out.field("record", "checkpoint")
    out.field("size", size)
    out.field("note", String(decoding: note, as: UTF8.self))
    out.endObject()
    out.newline()
  }

  private static func writeAnchor(_ name: String, _ anchor: ChainAnchor, into out: inout JSONWriter) {
    out.key(name)
    out.beginObject()
    out.field("seq", anchor.seq)
    out.field("hash", anchor.hash.hex)
    out.endObject()
  }

  static func writeEntry(seq: UInt64, view: EntryView, into out: inout JSONWriter) throws(FormatError) {
    if let sealed = view.sealed {
      try writeSealedEntry(seq: seq, view: view, sealed: sealed, into: &out)
      return
    }
    guard let typeName = String(validating: view.typeNameBytes, as: UTF8.self) else {
      throw FormatError("invalid UTF-8 in the type name")
    }
    out.beginObject()
    writeHeaderFields(seq: seq, view: view, into: &out)
    out.field("typeName", typeName)
    out.key("metadata")
    out.beginObject()
    var reader = ByteReader(view.metadataBytes)
    for _ in 0..<view.metadataCount {
      let key = try reader.string(Int(try reader.integer(UInt16.self, "metadata key length")), "metadata key")
      let value = try reader.string(Int(try reader.integer(UInt32.self, "metadata value length")), "metadata value")
      out.field(key, value)
    }
    out.endObject()
    let payload = Array(view.payload)
    out.field("payloadBase64", payload.base64)
    out.key("payload")
    if let json = try? PayloadText.compactJSON(payload, codec: view.codec) { out.raw(json) } else { out.null() }
    out.field("hash", Array(view.hash).hex)
    out.endObject()
    out.newline()
  }

  /// The fields every entry line starts with, from the entry's header (in the clear in both layouts).
  private static func writeHeaderFields(seq: UInt64, view: EntryView, into out: inout JSONWriter) {
    out.field("record", "entry")
    out.field("seq", seq)
    out.field("timestamp", Int(view.timestamp))
    out.field("time", ISOTime.string(micros: view.timestamp))
    out.field("kind", view.kind.description)
    out.field("flags", Int(view.flags.rawValue))
    out.field("codec", view.codec.description)
    out.field("schemaVersion", Int(view.schemaVersion))
  }

  /// An entry of an encrypted log, as stored: its clear header's fields (for people and `jq`; import
  /// checks that they match the stored bytes), the key id, and the stored value without its hash,
  /// ciphertext and tag included, in `sealedBase64`. Nothing is decrypted.
  static func writeSealedEntry(seq: UInt64, view: EntryView, sealed: SealedPart, into out: inout JSONWriter)
    throws(FormatError)
  {
    guard let typeName = String(validating: view.typeNameBytes, as: UTF8.self) else {
      throw FormatError("invalid UTF-8 in the clear type name")
    }
    out.beginObject()
    writeHeaderFields(seq: seq, view: view, into: &out)
    if !typeName.isEmpty { out.field("typeName", typeName) }
    out.field("keyID", EncryptionKey.text(sealed.keyID))
    out.field("sealedBase64", Array(view.body).base64)
    out.field("hash", Array(view.hash).hex)
    out.endObject()
    out.newline()
  }

  static func writeSnapshot(_ snapshot: Snapshot, value: [UInt8], into out: inout JSONWriter) {
    out.beginObject()
    out.field("record", "snapshot")
    out.field("seq", snapshot.seq)
    out.field("timestamp", Int(snapshot.timestamp))
    out.field("time", ISOTime.string(micros: snapshot.timestamp))
    out.field("codec", snapshot.codec.description)
    out.field("schemaVersion", Int(snapshot.schemaVersion))
    out.field("chainHash", snapshot.chainHash.hex)
    out.field("size", value.count)
    out.field("valueBase64", value.base64)
    out.endObject()
    out.newline()
  }

  /// One line of an export, as decoded: the union of the header's, an entry's and a snapshot's fields.
  struct Line: Decodable {
    struct Anchor: Decodable {
      var seq: UInt64
      var hash: String
    }
    var chronicleExport: Int?
    var record: String?
    var formatVersion: UInt32?
    var appID: String?
    var schemaVersion: UInt32?
    var created: Int64?
    var anchor: Anchor?
    var entries: Int?
    var first: UInt64?
    var last: UInt64?
    var snapshots: [UInt64]?
    var head: Anchor?
    var seq: UInt64?
    var timestamp: Int64?
    var kind: String?
    var flags: UInt8?
    var codec: String?
    var typeName: String?
    var metadata: [String: String]?
    var payloadBase64: String?
    var hash: String?
    var valueBase64: String?
    var logID: String?
    var tree: Int?
    var checkpoints: [UInt64]?
    var level: Int?
    var index: UInt64?
    var size: UInt64?
    var note: String?
    var keyID: String?
    var sealedBase64: String?
  }
}
