/// A violation of the byte layout of `docs/log-format.md`.
struct FormatError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
