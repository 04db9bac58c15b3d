/// Compact JSON text built by appending to a byte buffer, keys in the order written.
///
/// ```swift
/// var out = JSONWriter()
/// out.beginObject()
/// out.field("seq", UInt64(1))
/// out.key("payload")
/// out.raw(#"{"increment":{}}"#)
/// out.endObject()   // {"seq":1,"payload":{"increment":{}}}
/// ```
package struct JSONWriter {
  /// The text so far, UTF-8.
  package var bytes: [UInt8] = []
  private var needsComma = false

  /// An empty writer.
  package init() {}

  /// The text so far as a string.
  package var text: String { String(decoding: bytes, as: UTF8.self) }

  /// Starts an object.
  package mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
  }

  /// Ends an object.
  package mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  /// Starts an array.
  package mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma = false
  }

  /// Ends an array.
  package mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// Writes an object key; the next call writes its value.
  package mutating func key(_ name: String) {
    separate()
    appendQuoted(name)
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
  }

  /// Writes `"name":"value"`.
  package mutating func field(_ name: String, _ value: String) {
    key(name)
    string(value)
  }

  /// Writes `"name":value`.
  package mutating func field(_ name: String, _ value: Int) {
    key(name)
    int(value)
  }

  /// Writes `"name":value`.
  package mutating func field(_ name: String, _ value: UInt64) {
    key(name)
    uint(value)
  }

  /// Writes `"name":true` or `false`.
  package mutating func field(_ name: String, _ value: Bool) {
    key(name)
    bool(value)
  }

  /// Writes a string value.
  package mutating func string(_ value: String) {
    separate()
    appendQuoted(value)
    needsComma = true
  }

  /// Writes an integer value.
  package mutating func int(_ value: Int) { rawValue(String(value)) }
  /// Writes an unsigned integer value.
  package mutating func uint(_ value: UInt64) { rawValue(String(value)) }
  /// Writes a number with a fractional part (`null` if it is not finite).
  package mutating func double(_ value: Double) { rawValue(value.isFinite ? "\(value)" : "null") }
  /// Writes `true` or `false`.
  package mutating func bool(_ value: Bool) { rawValue(value ? "true" : "false") }
  /// Writes `null`.
  package mutating func null() { rawValue("null") }
  /// Writes already valid JSON text as a value.
  package mutating func raw(_ json: String) { rawValue(json) }

  /// Ends a line (for JSON Lines).
  package mutating func newline() {
    bytes.append(UInt8(ascii: "\n"))
    needsComma = false
  }

  private mutating func rawValue(_ text: String) {
    separate()
    bytes.append(contentsOf: text.utf8)
    needsComma = true
  }

  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }

  private mutating func appendQuoted(_ text: String) {
    JSONString.append(text, to: &bytes, shortEscapes: true)
  }
}
