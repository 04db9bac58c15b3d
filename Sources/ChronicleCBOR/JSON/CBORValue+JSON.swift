import Foundation

extension CBORValue {
  /// JSON text for humans and tools that lack the Swift type.
  ///
  /// The mapping is lossy but always valid JSON:
  /// - integers are printed exactly (the whole `negative` range included);
  ///   floats use the shortest decimal that round-trips, with NaN and the
  ///   infinities as the strings `"NaN"`, `"Infinity"` and `"-Infinity"`;
  /// - byte strings become base64 strings;
  /// - maps become objects with keys in stored order; a non-text key is
  ///   rendered as JSON and used as the key string (key `1` → `"1"`);
  /// - tag 1 (and RFC 9581 tag 1001 holding only a base time) becomes an
  ///   ISO 8601 UTC string with fractional seconds; tag 37 over 16 bytes a
  ///   UUID string; tag 32 over text the URL string; any other tag
  ///   `{"tag": N, "value": …}`;
  /// - `undefined` becomes `null` and `simple(n)` becomes `{"simple": n}`.
  ///
  /// Strings escape `"` and `\` with a backslash and every control character
  /// below U+0020 as `\u00XX`.
  ///
  /// `prettyPrinted` puts every array element and object member on its own
  /// line with two-space indentation; the compact form has no whitespace.
  public func jsonText(prettyPrinted: Bool = false) -> String {
    var writer = CBORJSONWriter(pretty: prettyPrinted)
    writer.write(self, level: 0)
    return String(decoding: writer.out, as: UTF8.self)
  }
}
