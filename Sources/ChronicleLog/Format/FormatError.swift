/// A violation of the byte layout of `docs/log-format.md`.
struct FormatError: Error, CustomStringConvertible {
  var description: String
  /// Why a sealed record did not open, when that is the problem (the caller names the key).
  var sealed: RecordCipher.Failure?
  init(_ description: String, sealed: RecordCipher.Failure? = nil) {
    self.description = description
    self.sealed = sealed
  }
}
