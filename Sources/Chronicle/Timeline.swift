import ChronicleLog
import DequeModule

/// A state the undo or redo stack can return to: the state after entry `seq`.
struct Step<State> {
  var seq: UInt64
  var state: State
}

extension Step: Codable where State: Codable {}
extension Step: Sendable where State: Sendable {}
extension Timeline: Sendable where State: Sendable {}

/// What replaying the log reconstructs: the current state and the undo and
/// redo stacks, after entry `seq`.
///
/// Live sends and replay go through the same transitions, so reopening a log
/// reproduces the state *and* the stacks exactly. Undo semantics are a text
/// editor's: a new undoable action clears the redo stack (the old branch stays
/// in the log); undo and redo jump to the state a step recorded.
struct Timeline<State> {
  var state: State
  var seq: UInt64
  var undo: Deque<Step<State>> = []
  var redo: Deque<Step<State>> = []

  /// Entry `seq` applied an action whose result is `newState`.
  mutating func applyAction(seq: UInt64, newState: State, flags: EntryFlags, undoDepth: Int) {
    if !flags.contains(.notUndoable) {
      if !flags.contains(.continuesGroup) || undo.isEmpty {
        undo.append(Step(seq: self.seq, state: state))
        if undo.count > undoDepth { undo.removeFirst(undo.count - undoDepth) }
      }
      redo.removeAll()
    }
    state = newState
    self.seq = seq
  }

  /// Entry `seq` jumped to `targetState` (the state after entry `target`); the jump is itself undoable.
  mutating func applyRestore(seq: UInt64, targetState: State, undoDepth: Int) {
    undo.append(Step(seq: self.seq, state: state))
    if undo.count > undoDepth { undo.removeFirst(undo.count - undoDepth) }
    redo.removeAll()
    state = targetState
    self.seq = seq
  }

  /// Entry `seq` undid the newest step; returns the step's target, or `nil` if there was none.
  @discardableResult
  mutating func applyUndo(seq: UInt64) -> UInt64? {
    guard let step = undo.popLast() else { return nil }
    redo.append(Step(seq: self.seq, state: state))
    state = step.state
    self.seq = seq
    return step.seq
  }

  /// Entry `seq` redid the newest undone step; returns its target, or `nil` if there was none.
  @discardableResult
  mutating func applyRedo(seq: UInt64) -> UInt64? {
    guard let step = redo.popLast() else { return nil }
    undo.append(Step(seq: self.seq, state: state))
    state = step.state
    self.seq = seq
    return step.seq
  }

  /// A marker: nothing changes but the position.
  mutating func applyMarker(seq: UInt64) { self.seq = seq }
}

/// The payload of restore, undo and redo entries: the entry whose resulting state becomes current.
struct JumpTarget: Codable, Sendable, Equatable {
  var target: UInt64
}

/// The auxiliary data of a snapshot: the undo and redo stacks at that point.
struct TimelineStacks<State: Codable>: Codable {
  var undo: Deque<Step<State>>
  var redo: Deque<Step<State>>
}
