import ChronicleLog

/// The auxiliary data of a snapshot: the undo and redo stacks at that point,
/// as the sequence numbers whose states they return to (newest last).
struct UndoStacks: Codable, Equatable {
  var undo: [UInt64]
  var redo: [UInt64]
}

/// Every periodic snapshot writes the stacks: directly, in the bytes of the synthesized
/// `Codable` conformance (`{"undo": [...], "redo": [...]}`), not through `Codable`'s containers.
extension UndoStacks: CBORCodable {
  func encode(to writer: inout CBORWriter) {
    writer.encodeMapHeader(count: 2)
    writer.encode("undo")
    undo.encode(to: &writer)
    writer.encode("redo")
    redo.encode(to: &writer)
  }

  init(from reader: inout CBORReader) throws {
    try reader.expectMap(count: 2)
    try reader.expectKey("undo")
    undo = try [UInt64](from: &reader)
    try reader.expectKey("redo")
    redo = try [UInt64](from: &reader)
  }
}
