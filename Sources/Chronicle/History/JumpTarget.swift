import ChronicleLog

/// The payload of restore, undo and redo entries: the entry whose resulting state becomes current.
struct JumpTarget: Codable, Sendable, Equatable {
  var target: UInt64
}
