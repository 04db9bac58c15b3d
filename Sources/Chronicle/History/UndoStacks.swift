import ChronicleLog

/// The auxiliary data of a snapshot: the undo and redo stacks at that point,
/// as the sequence numbers whose states they return to (newest last).
struct UndoStacks: Codable, Equatable {
  var undo: [UInt64]
  var redo: [UInt64]
}
