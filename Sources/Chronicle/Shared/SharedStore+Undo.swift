import ChronicleLog
import Foundation

// MARK: - Undo and redo in a shared stream

extension SharedStore {
  /// Takes back this device's latest action that is still in effect, keeping every action sent
  /// since, by this device or any other: the state becomes the fold of the stream without it.
  ///
  /// The undo is itself an entry (a *revert*, pending and pushed like an action), so every device
  /// folds the same way, and the audit trail keeps both the action and its undo. Only the device's
  /// own actions can be taken back. The validators run on the state without the action, now and
  /// again when the undo is pushed; one they refuse then is recorded in the stream as refused and
  /// reported like a refused action (``Rejection/isRevert``).
  ///
  /// - Returns: the undo's sequence number in the device's outbox.
  /// - Throws: ``ChronicleError/nothingToUndo`` when no action of this device is in effect,
  ///   ``ChronicleError/rejected(reason:)`` when the state without it breaks a validator (nothing is
  ///   kept), ``ChronicleError/closed``, or the outbox's storage error.
  @discardableResult
  public func undo(metadata: [String: String] = [:]) throws -> UInt64 {
    try takeBack(metadata: metadata, nothing: .nothingToUndo) { undoTarget($0) }
  }

  /// Puts back the action this device's latest undo took back (by taking back that undo), if the
  /// device sent no action since.
  ///
  /// - Returns: the redo's sequence number in the device's outbox.
  /// - Throws: ``ChronicleError/nothingToRedo``, ``ChronicleError/rejected(reason:)``,
  ///   ``ChronicleError/closed``, or the outbox's storage error.
  @discardableResult
  public func redo(metadata: [String: String] = [:]) throws -> UInt64 {
    try takeBack(metadata: metadata, nothing: .nothingToRedo) { redoTarget($0) }
  }

  /// Whether ``undo(metadata:)`` has an action to take back.
  public var canUndo: Bool { core.withLock { undoTarget($0) != nil } }

  /// Whether ``redo(metadata:)`` has an undo to take back.
  public var canRedo: Bool { core.withLock { redoTarget($0) != nil } }

  private func takeBack(
    metadata: [String: String], nothing: ChronicleError, target: (Core) -> String?
  ) throws(ChronicleError) -> UInt64 {
    let (seq, old, new) = try core.withLock { core throws(ChronicleError) in
      guard !core.isClosed else { throw .closed }
      guard let target = target(core) else { throw nothing }
      let seq = core.outboxHead + 1
      var metadata = metadata
      metadata[SharedStreamLayout.deviceKey] = device
      metadata[SharedStreamLayout.pendingKey] = String(seq)
      metadata[SharedStreamLayout.targetKey] = target
      let entry = NewEntry(
        kind: .marker, typeName: SharedStreamLayout.revertTypeName, metadata: metadata, codec: .json,
        payload: Array("{}".utf8), timestamp: Date().microsecondsSince1970)
      let item = Pending(seq: seq, entry: entry, action: nil, revert: Revert(id: "\(device) \(seq)", target: target))
      let (state, refused): (State, [UInt64: String])
      do { (state, refused) = try simulate(core, (core.pending + [item])[...]) } catch { throw ChronicleError(error) }
      if let reason = refused[seq] { throw .rejected(reason: reason) }
      do { try outbox.append(entry) } catch { throw ChronicleError(error) }
      core.outboxHead = seq
      core.pending.append(item)
      core.refused = refused
      let old = core.state
      core.state = state
      return (seq, old, state)
    }
    delivery.post(old: old, new: new)
    doorbell.ring()
    return seq
  }

  /// The device's actions and reverts, newest first: pending ones (not refused), then the stream's.
  private func ownNewestFirst(_ core: Core) -> [Own] {
    let pending = core.pending.reversed().filter { core.refused[$0.seq] == nil }.compactMap { item in
      Self.identity(item.entry.metadata).map { Own(id: $0, revert: item.revert) }
    }
    return pending + core.own.reversed()
  }

  /// What the stream's reverts and the pending ones take back.
  private func takenBack(_ core: Core) -> Set<String> {
    let pending = core.pending.filter { core.refused[$0.seq] == nil }.compactMap(\.revert)
    return Revert.takenBack(by: core.reverts + pending)
  }

  /// The newest action of this device still in effect.
  func undoTarget(_ core: Core) -> String? {
    let taken = takenBack(core)
    return ownNewestFirst(core).first { $0.revert == nil && !taken.contains($0.id) }?.id
  }

  /// The newest undo of this device still in effect, if no action of this device came after it.
  func redoTarget(_ core: Core) -> String? {
    let taken = takenBack(core)
    let reverts = Set((core.reverts + core.pending.compactMap(\.revert)).map(\.id))
    for item in ownNewestFirst(core) {
      guard let revert = item.revert else { return nil }  // an action since: nothing to redo
      // A revert taken back (an undo redone) or one of a revert (a redo) is passed over.
      if taken.contains(item.id) || reverts.contains(revert.target) { continue }
      return item.id
    }
    return nil
  }
}
