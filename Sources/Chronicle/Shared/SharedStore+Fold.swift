import ChronicleLog
import Foundation

extension SharedStore {
  /// Applies one stream entry to `state`: an action is reduced (its effects are not run: they ran
  /// on the device that sent it); a marker (a rejection, a label) changes nothing.
  static func fold(_ entry: StoredEntry, into state: inout State, reducer: AnyReducer<State, Action>) throws {
    switch entry.kind {
    case .action:
      _ = reducer.reduce(into: &state, action: try decode(entry))
    case .marker:
      break
    case .restore, .undo, .redo:
      throw ChronicleError.unsupported(
        "entry \(entry.seq) of the shared stream is a \(entry.kind) entry, which a shared store does not fold")
    }
  }

  static func decode(_ entry: StoredEntry) throws(ChronicleError) -> Action {
    do {
      return try entry.codec.decode(Action.self, from: entry.payload)
    } catch {
      throw .undecodableEntry(seq: entry.seq, type: "\(Action.self)", underlying: error)
    }
  }

  /// The outbox sequence number of `entry` when this device sent it.
  func ownPendingSeq(_ entry: StoredEntry) -> UInt64? {
    guard entry.metadata[SharedStreamLayout.deviceKey] == device else { return nil }
    return entry.metadata[SharedStreamLayout.pendingKey].flatMap { UInt64($0) }
  }

  /// The refusal `entry` records, if it is a rejection marker.
  static func rejection(in entry: StoredEntry) throws -> Rejection<Action>? {
    guard entry.kind == .marker, entry.typeName == SharedStreamLayout.rejectedTypeName else { return nil }
    var metadata = entry.metadata
    let reason = metadata.removeValue(forKey: SharedStreamLayout.reasonKey) ?? ""
    metadata.removeValue(forKey: SharedStreamLayout.typeKey)
    return Rejection(
      action: try decode(entry), reason: reason, metadata: metadata,
      device: metadata[SharedStreamLayout.deviceKey] ?? "",
      pendingSeq: metadata[SharedStreamLayout.pendingKey].flatMap { UInt64($0) } ?? 0, streamSeq: entry.seq)
  }

  /// Folds the device's copy of the stream, and reads the outbox's pending actions: those after
  /// the last action the stream settled (by the outbox's markers, or by the stream itself when
  /// the device stopped between receiving its own entries and marking them).
  static func recover(
    mirror: ActionLog, outbox: ActionLog, device: String, reducer: AnyReducer<State, Action>, initialState: State
  ) throws -> (core: Core, settled: (through: UInt64, stream: UInt64)) {
    var state = initialState
    var settled: (through: UInt64, stream: UInt64) = (0, 0)
    try mirror.forEach { entry in
      try fold(entry, into: &state, reducer: reducer)
      if entry.metadata[SharedStreamLayout.deviceKey] == device,
        let seq = entry.metadata[SharedStreamLayout.pendingKey].flatMap({ UInt64($0) })
      {
        settled = (seq, entry.seq)
      }
    }
    var marked: UInt64 = 0
    do {
      try outbox.forEach(reverse: true) { entry in
        guard entry.kind == .marker, entry.typeName == SharedStreamLayout.resolvedTypeName else { return }
        marked = try JSONDecoder().decode(Resolved.self, from: Data(entry.payload)).through
        throw FoundMarker()
      }
    } catch is FoundMarker {}
    let outboxHead = try outbox.head().seq
    var pending: [Pending] = []
    let first = max(marked, settled.through) + 1
    if first <= outboxHead {
      try outbox.forEach(in: first...outboxHead) { entry in
        guard entry.kind == .action else { return }
        let new = NewEntry(
          kind: entry.kind, flags: entry.flags, typeName: entry.typeName, metadata: entry.metadata, codec: entry.codec,
          schemaVersion: entry.schemaVersion, payload: entry.payload, timestamp: entry.timestamp)
        pending.append(Pending(seq: entry.seq, entry: new, action: try decode(entry)))
      }
    }
    let core = Core(
      confirmed: state, head: try mirror.head(), outboxHead: outboxHead, markedThrough: marked, pending: pending,
      state: state)
    return (core, settled)
  }

  /// The payload of an outbox marker: the stream's entry `stream` settled the outbox's actions through `through`.
  struct Resolved: Codable {
    var through: UInt64
    var stream: UInt64
  }

  /// Drops the pending actions through `through`, which stream entry `stream` settled, and records
  /// that in the outbox (once).
  func settle(through: UInt64, stream: UInt64, _ core: inout Core) throws {
    core.pending.removeAll { $0.seq <= through }
    guard through > core.markedThrough else { return }
    let payload = Array(#"{"stream":\#(stream),"through":\#(through)}"#.utf8)
    try outbox.append(
      NewEntry(
        kind: .marker, typeName: SharedStreamLayout.resolvedTypeName,
        metadata: [SharedStreamLayout.deviceKey: device], codec: .json, payload: payload))
    core.markedThrough = through
    core.outboxHead += 1
  }

  /// Reapplies the pending actions on the confirmed state: those the validators refuse there are
  /// left out of ``state`` and noted in ``Core/refused``.
  func rebase(_ core: inout Core) {
    var state = core.confirmed
    core.refused = [:]
    for pending in core.pending {
      var next = state
      _ = reducer.reduce(into: &next, action: pending.action)
      if let refusal = validators.first(where: { !$0.isValid(next) }) {
        core.refused[pending.seq] = refusal.reason
      } else {
        state = next
      }
    }
    core.state = state
  }

  /// The entries to push for the oldest pending actions, on the confirmed state: each action that
  /// the validators accept there, or a rejection marker for one they refuse.
  func entriesToPush(_ core: Core) -> [NewEntry] {
    var state = core.confirmed
    var entries: [NewEntry] = []
    for pending in core.pending.prefix(options.pushBatchSize) {
      var next = state
      _ = reducer.reduce(into: &next, action: pending.action)
      if let refusal = validators.first(where: { !$0.isValid(next) }) {
        var marker = pending.entry
        marker.kind = .marker
        marker.typeName = SharedStreamLayout.rejectedTypeName
        marker.metadata[SharedStreamLayout.typeKey] = pending.entry.typeName
        marker.metadata[SharedStreamLayout.reasonKey] = refusal.reason
        entries.append(marker)
      } else {
        state = next
        entries.append(pending.entry)
      }
    }
    return entries
  }
}

/// Ends the backward walk over an outbox at its last marker.
private struct FoundMarker: Error {}
