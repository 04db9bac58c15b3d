import ChronicleLog

/// What a scoped store forwards undo and redo to: its root store.
protocol UndoRedoRoot: Sendable {
  func undo(metadata: [String: String]) throws -> UInt64
  func redo(metadata: [String: String]) throws -> UInt64
  var canUndo: Bool { get }
  var canRedo: Bool { get }
}
