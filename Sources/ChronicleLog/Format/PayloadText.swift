import ChronicleCBOR

/// A payload as one line of JSON text, for people and tools.
package enum PayloadText {
  /// The payload as compact JSON: a JSON payload that is already valid, single-line JSON
  /// is returned as stored (fast, and exactly what the app wrote); anything else goes
  /// through ``PayloadCodec/renderJSON(_:prettyPrinted:)``.
  package static func compactJSON(_ bytes: [UInt8], codec: PayloadCodec) throws -> String {
    if codec == .json, !bytes.contains(0x0A), !bytes.contains(0x0D), JSONCheck.isValid(bytes),
      let text = String(validating: bytes, as: UTF8.self)
    {
      return text
    }
    return try codec.renderJSON(bytes)
  }
}
