import Crypto
import Foundation

/// The byte layout of snapshot values (format 1). `docs/log-format.md` is the specification.
///
/// ```
/// offset size  field
///  0      1    snapshot layout version (1)
///  1      1    codec
///  2      2    reserved, zero
///  4      4    state schema version      u32 BE
///  8      8    seq                       u64 BE (equals the key)
/// 16      8    timestamp, µs since 1970  i64 BE
/// 24     32    chain hash at seq
/// 56      4    state length S            u32 BE
/// 60      S    state
///         4    auxiliary length A        u32 BE
///         A    auxiliary
/// end-32 32    SHA-256 of all bytes above
/// ```
enum SnapshotFormat {
  static let layoutVersion: UInt8 = 1

  static func encode(_ snapshot: Snapshot) throws(LogError) -> [UInt8] {
    guard snapshot.state.count <= Int(UInt32.max), snapshot.auxiliary.count <= Int(UInt32.max) else {
      throw .invalidEntry(reason: "snapshot at \(snapshot.seq) is larger than 4 GiB")
    }
    guard snapshot.chainHash.count == 32 else {
      throw .invalidEntry(reason: "snapshot at \(snapshot.seq) has a chain hash of \(snapshot.chainHash.count) bytes")
    }
    var writer = ByteWriter(capacity: 100 + snapshot.state.count + snapshot.auxiliary.count)
    writer.append(layoutVersion)
    writer.append(snapshot.codec.rawValue)
    writer.append(bigEndian: UInt16(0))
    writer.append(bigEndian: snapshot.schemaVersion)
    writer.append(bigEndian: snapshot.seq)
    writer.append(bigEndian: snapshot.timestamp)
    writer.append(snapshot.chainHash)
    writer.append(bigEndian: UInt32(snapshot.state.count))
    writer.append(snapshot.state)
    writer.append(bigEndian: UInt32(snapshot.auxiliary.count))
    writer.append(snapshot.auxiliary)
    writer.append(Array(SHA256.hash(data: writer.bytes)))
    return writer.bytes
  }

  /// Parses and checks a stored value; `seq` is the key it was stored under.
  static func decode(seq: UInt64, value: UnsafeRawBufferPointer) throws(FormatError) -> Snapshot {
    guard value.count >= 60 + 4 + 32 else { throw FormatError("value of \(value.count) bytes is too short") }
    let body = UnsafeRawBufferPointer(rebasing: value[..<(value.count - 32)])
    guard SHA256.hash(data: body).elementsEqual(value[(value.count - 32)...]) else {
      throw FormatError("checksum mismatch: the stored bytes were changed")
    }
    var reader = ByteReader(body)
    let version = try reader.integer(UInt8.self, "layout version")
    guard version == layoutVersion else { throw FormatError("unknown snapshot layout version \(version)") }
    let codecByte = try reader.integer(UInt8.self, "codec")
    guard let codec = PayloadCodec(rawValue: codecByte) else { throw FormatError("unknown codec \(codecByte)") }
    _ = try reader.integer(UInt16.self, "reserved")
    let schemaVersion = try reader.integer(UInt32.self, "schema version")
    let storedSeq = try reader.integer(UInt64.self, "seq")
    guard storedSeq == seq else { throw FormatError("records seq \(storedSeq) but is stored under \(seq)") }
    let timestamp = try reader.integer(Int64.self, "timestamp")
    let chainHash = Array(try reader.bytes(32, "chain hash"))
    let state = Array(try reader.bytes(Int(try reader.integer(UInt32.self, "state length")), "state"))
    let auxiliary = Array(try reader.bytes(Int(try reader.integer(UInt32.self, "auxiliary length")), "auxiliary"))
    guard reader.remaining == 0 else { throw FormatError("\(reader.remaining) unexpected trailing bytes") }
    return Snapshot(
      seq: seq, timestamp: timestamp, codec: codec, schemaVersion: schemaVersion, chainHash: chainHash,
      state: state, auxiliary: auxiliary)
  }
}
