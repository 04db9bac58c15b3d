import ChronicleLog
import Foundation

// MARK: - Folding a shared stream

/// One device's revert (an undo or a redo): the entry `id` takes back the entry `target`.
struct Revert: Sendable, Hashable {
  var id: String
  var target: String

  /// The entries the reverts take back, oldest revert first: walked from the newest, a revert that
  /// a later revert took back takes nothing back (so a redo restores what its undo took back).
  static func takenBack(by reverts: [Revert]) -> Set<String> {
    var taken: Set<String> = []
    for revert in reverts.reversed() where !taken.contains(revert.id) { taken.insert(revert.target) }
    return taken
  }
}

extension SharedStore {
  /// An entry's name in the stream: its device and its outbox number, `"ann 12"`.
  static func identity(_ metadata: [String: String]) -> String? {
    guard let device = metadata[SharedStreamLayout.deviceKey], let seq = metadata[SharedStreamLayout.pendingKey] else {
      return nil
    }
    return device + " " + seq
  }

  /// The revert `entry` records, if it is one.
  static func revert(in entry: StoredEntry) -> Revert? {
    guard entry.kind == .marker, entry.typeName == SharedStreamLayout.revertTypeName,
      let id = identity(entry.metadata), let target = entry.metadata[SharedStreamLayout.targetKey]
    else { return nil }
    return Revert(id: id, target: target)
  }

  /// Applies one stream entry to `state`: an action is reduced unless a revert took it back (its
  /// effects are not run: they ran on the device that sent it); a marker (a refusal, a revert, a
  /// label) changes nothing.
  static func fold(
    _ entry: StoredEntry, into state: inout State, reducer: AnyReducer<State, Action>, skipping takenBack: Set<String> = []
  ) throws {
    switch entry.kind {
    case .action:
      if !takenBack.isEmpty, let id = identity(entry.metadata), takenBack.contains(id) { return }
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

  /// The state after entries 1…`seq` of the device's copy, with the actions `takenBack` left out.
  func fold(through seq: UInt64, skipping takenBack: Set<String>) throws -> State {
    var state = initialState
    if seq > 0 {
      try mirror.forEach(in: 1...seq) { entry in
        try Self.fold(entry, into: &state, reducer: reducer, skipping: takenBack)
      }
    }
    return state
  }

  /// The reverts among entries 1…`seq` of the device's copy.
  func reverts(through seq: UInt64) throws -> [Revert] {
    var found: [Revert] = []
    if seq > 0 { try mirror.forEach(in: 1...seq) { if let revert = Self.revert(in: $0) { found.append(revert) } } }
    return found
  }

  /// The outbox sequence number of `entry` when this device sent it.
  func ownPendingSeq(_ entry: StoredEntry) -> UInt64? {
    guard entry.metadata[SharedStreamLayout.deviceKey] == device else { return nil }
    return entry.metadata[SharedStreamLayout.pendingKey].flatMap { UInt64($0) }
  }

  /// The refusal `entry` records, if it is a rejection marker. A refused revert is reported with
  /// the action it tried to take back (read from the copy) and ``Rejection/isRevert`` set.
  func rejection(in entry: StoredEntry) throws -> Rejection<Action>? {
    guard entry.kind == .marker, entry.typeName == SharedStreamLayout.rejectedTypeName else { return nil }
    var metadata = entry.metadata
    let reason = metadata.removeValue(forKey: SharedStreamLayout.reasonKey) ?? ""
    let type = metadata.removeValue(forKey: SharedStreamLayout.typeKey)
    let refused: Action
    if type == SharedStreamLayout.revertTypeName {
      guard let target = metadata[SharedStreamLayout.targetKey], let found = try action(named: target, before: entry.seq)
      else { return nil }
      refused = found
    } else {
      refused = try Self.decode(entry)
    }
    return Rejection(
      action: refused, reason: reason, metadata: metadata, device: metadata[SharedStreamLayout.deviceKey] ?? "",
      pendingSeq: metadata[SharedStreamLayout.pendingKey].flatMap { UInt64($0) } ?? 0, streamSeq: entry.seq,
      isRevert: type == SharedStreamLayout.revertTypeName)
  }

  /// The action named `id` among the entries before `seq`, or, when `id` names a revert, the
  /// action that revert took back.
  func action(named id: String, before seq: UInt64) throws -> Action? {
    guard seq > 1 else { return nil }
    var found: StoredEntry?
    do {
      try mirror.forEach(in: 1...(seq - 1), reverse: true) { entry in
        guard Self.identity(entry.metadata) == id else { return }
        found = entry
        throw FoundEntry()
      }
    } catch is FoundEntry {}
    guard let found else { return nil }
    if let revert = Self.revert(in: found) { return try action(named: revert.target, before: found.seq) }
    return found.kind == .action ? try Self.decode(found) : nil
  }

  /// Folds the device's copy, and reads the outbox's pending actions: those after the last action
  /// the stream settled (by the outbox's markers, or by the stream itself when the device stopped
  /// between receiving its own entries and marking them).
  func recover() throws -> (core: Core, settled: (through: UInt64, stream: UInt64)) {
    var state = initialState
    var settled: (through: UInt64, stream: UInt64) = (0, 0)
    var reverts: [Revert] = []
    var own: [Own] = []
    try mirror.forEach { entry in
      try Self.fold(entry, into: &state, reducer: reducer)
      let revert = Self.revert(in: entry)
      if let revert { reverts.append(revert) }
      if let seq = ownPendingSeq(entry) {
        settled = (seq, entry.seq)
        if entry.kind == .action || revert != nil, let id = Self.identity(entry.metadata) {
          own.append(Own(id: id, revert: revert))
        }
      }
    }
    let head = try mirror.head()
    if !reverts.isEmpty { state = try fold(through: head.seq, skipping: Revert.takenBack(by: reverts)) }
    var marked: UInt64 = 0
    do {
      try outbox.forEach(reverse: true) { entry in
        guard entry.kind == .marker, entry.typeName == SharedStreamLayout.resolvedTypeName else { return }
        marked = try JSONDecoder().decode(Resolved.self, from: Data(entry.payload)).through
        throw FoundEntry()
      }
    } catch is FoundEntry {}
    let outboxHead = try outbox.head().seq
    var pending: [Pending] = []
    let first = max(marked, settled.through) + 1
    if first <= outboxHead {
      try outbox.forEach(in: first...outboxHead) { entry in
        guard entry.kind == .action || Self.revert(in: entry) != nil else { return }
        let new = NewEntry(
          kind: entry.kind, flags: entry.flags, typeName: entry.typeName, metadata: entry.metadata, codec: entry.codec,
          schemaVersion: entry.schemaVersion, payload: entry.payload, timestamp: entry.timestamp)
        pending.append(
          Pending(
            seq: entry.seq, entry: new, action: entry.kind == .action ? try Self.decode(entry) : nil,
            revert: Self.revert(in: entry)))
      }
    }
    let core = Core(
      confirmed: state, head: head, reverts: reverts, own: own, outboxHead: outboxHead, markedThrough: marked,
      pending: pending, state: state)
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

  /// Applies `pending` in order on the confirmed state, running the validators after each: an
  /// action is reduced; a revert folds the copy again without what it takes back. Returns the
  /// state, and the reason each refused one was refused.
  func simulate(_ core: Core, _ pending: ArraySlice<Pending>) throws -> (state: State, refused: [UInt64: String]) {
    var state = core.confirmed
    var refused: [UInt64: String] = [:]
    var accepted: [Int] = []
    func rebuilt(_ indices: [Int]) throws -> State { try refold(core, indices.map { pending[$0] }) }
    for index in pending.indices {
      let item = pending[index]
      if let action = item.action {
        // In place, without a copy of the state per action: a refusal (rare) rebuilds it.
        _ = reducer.reduce(into: &state, action: action)
      } else {
        state = try rebuilt(accepted + [index])
      }
      if let refusal = validators.first(where: { !$0.isValid(state) }) {
        refused[item.seq] = refusal.reason
        state = try rebuilt(accepted)
      } else {
        accepted.append(index)
      }
    }
    return (state, refused)
  }

  /// The confirmed state with `accepted` applied: its actions reduced on top, or, when it holds a
  /// revert, the copy folded again without what the reverts take back, then its actions.
  private func refold(_ core: Core, _ accepted: [Pending]) throws -> State {
    let reverts = accepted.compactMap(\.revert)
    guard !reverts.isEmpty else {
      var state = core.confirmed
      for item in accepted { if let action = item.action { _ = reducer.reduce(into: &state, action: action) } }
      return state
    }
    let takenBack = Revert.takenBack(by: core.reverts + reverts)
    var state = try fold(through: core.head.seq, skipping: takenBack)
    for item in accepted {
      guard let action = item.action, let id = Self.identity(item.entry.metadata), !takenBack.contains(id) else {
        continue
      }
      _ = reducer.reduce(into: &state, action: action)
    }
    return state
  }

  /// Reapplies the pending actions on the confirmed state: those the validators refuse there are
  /// left out of ``state`` and noted in ``Core/refused``.
  func rebase(_ core: inout Core) throws {
    (core.state, core.refused) = try simulate(core, core.pending[...])
  }

  /// The entries to push for the oldest pending actions, on the confirmed state: each one that
  /// the validators accept there, or a rejection marker for one they refuse.
  func entriesToPush(_ core: Core) throws -> [NewEntry] {
    let batch = core.pending.prefix(options.pushBatchSize)
    let refused = try simulate(core, batch).refused
    return batch.map { item in
      guard let reason = refused[item.seq] else { return item.entry }
      var marker = item.entry
      marker.kind = .marker
      marker.typeName = SharedStreamLayout.rejectedTypeName
      marker.metadata[SharedStreamLayout.typeKey] = item.entry.typeName
      marker.metadata[SharedStreamLayout.reasonKey] = reason
      return marker
    }
  }
}

/// Ends a walk over a log at the entry it looked for.
private struct FoundEntry: Error {}
