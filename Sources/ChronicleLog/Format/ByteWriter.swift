/// Big-endian fixed-width writing into a growing byte array.
struct ByteWriter {
  var bytes: [UInt8]

  init(capacity: Int = 256) {
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  mutating func append(_ value: UInt8) { bytes.append(value) }
  /// Appends the 32 zero bytes an entry's chain hash replaces once it is known.
  mutating func appendHashRoom() {
    withUnsafeBytes(of: (UInt64(0), UInt64(0), UInt64(0), UInt64(0))) { bytes.append(contentsOf: $0) }
  }
  mutating func append<T: FixedWidthInteger>(bigEndian value: T) {
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
  }
  mutating func append(_ data: some Collection<UInt8>) { bytes.append(contentsOf: data) }
  mutating func append(utf8 string: String) {
    var string = string
    string.withUTF8 { bytes.append(contentsOf: $0) }
  }
}
