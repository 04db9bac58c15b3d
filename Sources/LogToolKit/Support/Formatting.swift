#if LogTool
import ChronicleLog
import Foundation

/// Text forms shared by the commands.
package enum Format {
  /// `2026-01-01T00:00:00.000000Z`.
  static func time(_ micros: Int64) -> String { ISOTime.string(micros: micros) }

  /// `2026-01-01T00:00:00.000Z`, for tables.
  static func shortTime(_ micros: Int64) -> String { ISOTime.string(micros: micros, fractionDigits: 3) }

  /// `1,234,567`.
  static func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (index, digit) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
      out.append(digit)
    }
    return value < 0 ? "-" + out : out
  }

  /// `1,234.5`: a fixed number of fraction digits, thousands grouped as ``grouped(_:)`` does.
  static func decimal(_ value: Double, digits: Int) -> String {
    guard value.isFinite else { return "-" }
    let scale = (0..<digits).reduce(1.0) { value, _ in value * 10 }
    let scaled = (value.magnitude * scale).rounded()
    let whole = Int(scaled / scale)
    var text = grouped(whole)
    if digits > 0 {
      let fraction = String(Int(scaled - Double(whole) * scale))
      text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
    return value < 0 && scaled > 0 ? "-" + text : text
  }

  /// `98,304 bytes (96.0 KiB)`.
  static func bytes(_ count: Int) -> String {
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = -1
    while value >= 1024, unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    let plain = "\(grouped(count)) bytes"
    return unit < 0 ? plain : plain + " (" + String(format: "%.1f", value) + " " + units[unit] + ")"
  }

  /// `seq 1…300`, or `no entries`.
  static func range(_ range: ClosedRange<UInt64>?) -> String {
    guard let range else { return "no entries" }
    return "seq \(range.lowerBound)…\(range.upperBound)"
  }

  /// The flags as letters for tables: `E` sent by an effect, `U` not undoable, `G` continues
  /// the previous entry's undo group, a digit for an unknown bit; `-` for none.
  static func flagLetters(_ flags: EntryFlags) -> String {
    var letters = ""
    if flags.contains(.fromEffect) { letters += "E" }
    if flags.contains(.notUndoable) { letters += "U" }
    if flags.contains(.continuesGroup) { letters += "G" }
    for bit in 3..<8 where flags.rawValue & (1 << bit) != 0 { letters += String(bit) }
    return letters.isEmpty ? "-" : letters
  }

  /// Flag names, with unknown bits as `bitN`.
  package static func flagNames(_ flags: EntryFlags) -> [String] {
    var names = flags.names
    for bit in 3..<8 where flags.rawValue & (1 << bit) != 0 { names.append("bit\(bit)") }
    return names
  }

  /// `key=value key2="with space"`, keys in order.
  static func metadata(_ metadata: [String: String]) -> String {
    metadata.sorted { $0.key < $1.key }.map(pair).joined(separator: " ")
  }

  /// `key=value`, the value quoted (with `\"`, `\\`, `\n`, `\t` escapes) if it is empty or holds
  /// a space, quote, `=` or control character.
  static func pair(_ pair: (key: String, value: String)) -> String {
    "\(pair.key)=\(quotedIfNeeded(pair.value))"
  }

  private static func quotedIfNeeded(_ value: String) -> String {
    let needsQuotes =
      value.isEmpty || value.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20 }
    guard needsQuotes else { return value }
    var out = "\""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }

  /// Compact JSON text re-indented with two spaces per level (`{}` and `[]` stay on one line),
  /// the same for every codec and platform.
  static func indented(json: String) -> String {
    var out: [UInt8] = []
    var level = 0
    var inString = false
    var escaped = false
    let bytes = Array(json.utf8)
    func newline() {
      out.append(UInt8(ascii: "\n"))
      out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * 2))
    }
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      defer { index += 1 }
      if inString {
        out.append(byte)
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        continue
      }
      switch byte {
      case UInt8(ascii: "\""):
        inString = true
        out.append(byte)
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        out.append(byte)
        let closing = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
        if index + 1 < bytes.count, bytes[index + 1] == closing {
          out.append(closing)
          index += 1
        } else {
          level += 1
          newline()
        }
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        level -= 1
        newline()
        out.append(byte)
      case UInt8(ascii: ","):
        out.append(byte)
        newline()
      case UInt8(ascii: ":"):
        out.append(contentsOf: [byte, UInt8(ascii: " ")])
      case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
        break
      default:
        out.append(byte)
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// `0.012 s (25,000 entries/s)`.
  static func rate(_ count: Int, seconds: Double) -> String {
    let perSecond = seconds > 0 ? Int((Double(count) / seconds).rounded()) : 0
    return String(format: "%.3f s", seconds) + " (\(grouped(perSecond)) entries/s)"
  }
}

extension StoredEntry {
  /// The size of the stored value in bytes, as `docs/log-format.md` lays it out.
  package var storedSize: Int {
    let metadataBytes = metadata.reduce(0) { $0 + 6 + $1.key.utf8.count + $1.value.utf8.count }
    return 24 + typeName.utf8.count + metadataBytes + payload.count + 32
  }

  /// Writes the entry as a JSON object: every field, the payload rendered as JSON
  /// (`null` with `payloadError` when it does not decode), and for a restore, undo or redo
  /// entry whose target was resolved, `jump`: `{"target", "state", "stateType", "chain", "complete"}`.
  package func writeJSON(into out: inout JSONWriter, jump: JumpResolution? = nil) {
    out.beginObject()
    out.field("seq", seq)
    out.field("timestamp", Int(timestamp))
    out.field("time", Format.time(timestamp))
    out.field("kind", kind.description)
    out.key("flags")
    out.beginArray()
    for name in Format.flagNames(flags) { out.string(name) }
    out.endArray()
    out.field("codec", codec.description)
    out.field("schemaVersion", Int(schemaVersion))
    out.field("typeName", typeName)
    out.key("metadata")
    out.beginObject()
    for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { out.field(key, value) }
    out.endObject()
    out.field("size", storedSize)
    out.field("hash", hash.hex)
    if let sealedKeyID {
      out.field("encrypted", true)
      out.field("keyID", EncryptionKey.idText(sealedKeyID))
      out.key("payload")
      out.null()
      out.endObject()
      return
    }
    out.key("payload")
    do { out.raw(try PayloadText.compactJSON(payload, codec: codec)) } catch {
      out.null()
      out.field("payloadError", "\(error)")
    }
    if let jump {
      out.key("jump")
      out.beginObject()
      out.field("target", jump.target)
      out.field("state", jump.state)
      out.key("stateType")
      if let type = jump.stateTypeName { out.string(type) } else { out.null() }
      out.key("chain")
      out.beginArray()
      for seq in jump.chain { out.raw(String(seq)) }
      out.endArray()
      out.field("complete", jump.isComplete)
      out.endObject()
    }
    out.endObject()
  }

  /// The cells of a `list` row: seq, time, kind, flags, type, size, metadata. A restore,
  /// undo or redo entry shows, instead of its type name, the state it returns to.
  func rowCells(jump: JumpResolution? = nil) -> [String] {
    [
      String(seq), Format.shortTime(timestamp), kind.description, Format.flagLetters(flags),
      sealedKeyID != nil ? (typeName.isEmpty ? "encrypted" : typeName) : jump.map { "→ " + $0.summary } ?? typeName,
      String(storedSize),
      sealedKeyID.map { "encrypted (key \(EncryptionKey.idText($0)))" } ?? Format.metadata(metadata),
    ]
  }

  /// The columns of `list` and `tail`.
  static var tableColumns: [(String, TableLayout.Alignment)] {
    [
      ("SEQ", .right), ("TIME", .left), ("KIND", .left), ("FLAGS", .left), ("TYPE", .left), ("SIZE", .right),
      ("METADATA", .left),
    ]
  }
}

extension ChainAnchor {
  /// `300 11fb3b8a…` with the full hash.
  var text: String { "\(seq) \(hash.hex)" }

  /// Writes `{"seq":…,"hash":"…"}`.
  func writeJSON(into out: inout JSONWriter) {
    out.beginObject()
    out.field("seq", seq)
    out.field("hash", hash.hex)
    out.endObject()
  }
}
#endif  // LogTool
