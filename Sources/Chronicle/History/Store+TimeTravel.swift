import ChronicleLog

extension Store {
  /// The state after entry `seq` (0: the initial state), computed from the
  /// nearest snapshot or cached keyframe plus a fold. Changes nothing.
  ///
  /// Linear in the entries folded: each state a restore, undo or redo entry
  /// jumps to is computed once.
  ///
  /// - Throws: ``ChronicleError/noSuchEntry(seq:)`` for a seq past the end,
  ///   ``ChronicleError/compacted(seq:cut:)`` for a seq before the log's cut.
  public func state(at seq: UInt64) throws -> State {
    let current = writer.withLock { $0.cursor }
    if seq == current.seq { return current.state }
    guard seq < current.seq else { throw ChronicleError.noSuchEntry(seq: seq) }
    return try replayer.state(at: seq).state
  }

  /// Makes the state after entry `seq` current by appending a *restore* entry.
  /// Nothing is deleted: the audit trail shows the jump, and it can be undone.
  ///
  /// - Throws: ``ChronicleError/rejected(reason:)`` if a validator refuses the state it would make current.
  @discardableResult
  public func restore(to seq: UInt64, metadata: [String: String] = [:]) throws -> UInt64 {
    let target = try state(at: seq)
    return try jump(.restore, metadata: metadata) { cursor, entrySeq in
      cursor.applyRestore(seq: entrySeq, targetState: target, undoDepth: options.undoDepth)
      return seq
    }
  }

  /// Undoes the newest undo step by appending an *undo* entry naming the state it restores.
  ///
  /// - Throws: ``ChronicleError/nothingToUndo`` when there is nothing to undo;
  ///   ``ChronicleError/rejected(reason:)`` if a validator refuses the state it would make current.
  @discardableResult
  public func undo(metadata: [String: String] = [:]) throws -> UInt64 {
    try jump(.undo, metadata: metadata) { cursor, entrySeq throws(ChronicleError) in
      try cursor.applyUndo(seq: entrySeq, undoDepth: options.undoDepth) { seq throws(ChronicleError) in
        try replayer.state(at: seq).state
      }
    }
  }

  /// Redoes the newest undone step by appending a *redo* entry naming the state it restores.
  ///
  /// - Throws: ``ChronicleError/nothingToRedo`` when there is nothing to redo;
  ///   ``ChronicleError/rejected(reason:)`` if a validator refuses the state it would make current.
  @discardableResult
  public func redo(metadata: [String: String] = [:]) throws -> UInt64 {
    try jump(.redo, metadata: metadata) { cursor, entrySeq throws(ChronicleError) in
      try cursor.applyRedo(seq: entrySeq, undoDepth: options.undoDepth) { seq throws(ChronicleError) in
        try replayer.state(at: seq).state
      }
    }
  }

  /// Whether ``undo(metadata:)`` has a step to undo.
  public var canUndo: Bool {
    observationAccess()
    return shared.withLock { $0.canUndo }
  }

  /// Whether ``redo(metadata:)`` has a step to redo.
  public var canRedo: Bool {
    observationAccess()
    return shared.withLock { $0.canRedo }
  }

  /// Runs `body`; the undoable actions it sends form one undo step.
  ///
  /// ```swift
  /// try store.undoGroup {
  ///   try store.send(.withdraw(account: "a", cents: 500))
  ///   try store.send(.deposit(account: "b", cents: 500))
  /// }
  /// try store.undo()   // both are undone
  /// ```
  public func undoGroup<R>(_ body: () throws -> R) rethrows -> R {
    writer.withLock { writer in
      if writer.groupDepth == 0 { writer.groupHasSteps = false }
      writer.groupDepth += 1
    }
    defer { writer.withLock { $0.groupDepth -= 1 } }
    return try body()
  }

  /// Appends a restore, undo or redo entry whose effect on the cursor
  /// `transition` applies, returning the entry whose state became current (`nil`: nothing to do).
  private func jump(
    _ kind: EntryKind, metadata: [String: String],
    transition: (inout UndoCursor<State>, UInt64) throws(ChronicleError) -> UInt64?
  ) throws(ChronicleError) -> UInt64 {
    // Sends staged for a group commit are committed first: the jump follows them.
    let (seq, backgroundFailures) = try withCommittedWriter { writer throws(ChronicleError) -> (UInt64, [ChronicleError]) in
      guard !writer.isClosed else { throw .closed }
      var cursor = writer.cursor
      let old = cursor.state
      guard let targetSeq = try transition(&cursor, cursor.seq + 1) else {
        throw kind == .undo ? .nothingToUndo : .nothingToRedo
      }
      // A jump makes a state current like a send does: the validators may refuse it.
      for validator in validators where !validator.isValid(cursor.state) {
        throw .rejected(reason: validator.reason)
      }
      let entry: NewEntry
      do {
        entry = try NewEntry(
          kind: kind, encoding: JumpTarget(target: targetSeq), typeName: "\(kind)",
          metadata: self.metadata(over: metadata),
          codec: options.codec, schemaVersion: options.schemaVersion)
      } catch {
        throw ChronicleError(error)
      }
      do { try log.append(entry) } catch { throw ChronicleError(error) }
      writer.cursor = cursor
      writer.groupHasSteps = false
      publish(cursor, [Publication(seq: cursor.seq, action: nil, old: old, new: cursor.state, effect: .none)])
      return (cursor.seq, backgroundWorkIfDue(&writer, from: cursor.seq - 1))
    }
    let failures = backgroundFailures + seq.1
    if !failures.isEmpty { reportBackgroundErrors(failures) }
    drain()
    return seq.0
  }
}

extension Store: UndoRedoRoot {}
