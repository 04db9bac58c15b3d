import ChronicleLog

/// Checks a ``/ChronicleCBOR/CBORCodable`` conformance against the type's `Codable` one: for
/// each value, the hand-written bytes must equal ``/ChronicleCBOR/CBOREncoder``'s, and each
/// path must read the other's bytes back to an equal value. Failures are
/// reported to the running test (XCTest or Swift Testing) with the value and
/// both encodings.
///
/// ```swift
/// @Test func ledgerActionsCodeAlike() {
///   expectCBORCodingMatchesCodable([.open("cash"), .deposit("cash", cents: 5), .close])
/// }
/// ```
///
/// Pass a value of every case, with edge values (empty strings, negative and
/// large numbers, non-ASCII text): a conformance that writes other bytes would
/// log entries that `Codable` reads differently, or not at all.
public func expectCBORCodingMatchesCodable<Value: CBORCodable & Equatable>(
  _ values: [Value],
  fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
) {
  let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
  for value in values {
    let handWritten = value.cborBytes
    let codable: [UInt8]
    do {
      codable = try CBOREncoder().encode(value)
    } catch {
      site.fail("\(describe(value)) does not encode through Codable: \(error)")
      continue
    }
    guard handWritten == codable else {
      site.fail(
        """
        CBORCodable writes other bytes than Codable for \(describe(value)):
          CBORCodable: \(handWritten.hex(separator: " "))
          Codable:     \(codable.hex(separator: " "))
        """)
      continue
    }
    let readBack = codable.withUnsafeBytes { Value(cborBytes: $0) }
    if readBack != value {
      site.fail(
        "CBORCodable's init(from:) reads \(readBack.map(describe) ?? "nothing (it threw)") from \(describe(value))'s bytes \(codable.hex(separator: " "))")
    }
    do {
      let decoded = try CBORDecoder().decode(Value.self, from: handWritten)
      if decoded != value {
        site.fail("Codable reads \(describe(decoded)) from the CBORCodable bytes of \(describe(value))")
      }
    } catch {
      site.fail("Codable cannot read the CBORCodable bytes of \(describe(value)): \(error)")
    }
  }
}
