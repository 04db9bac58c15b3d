// MARK: - Jumps: restore, undo, redo

extension ActionLog {
  /// The target a restore, undo or redo entry names (`{"target": seq}` in its codec), or
  /// `nil` for another kind.
  ///
  /// - Throws: ``LogError/codec(codec:typeName:underlying:)`` if the payload is not a target.
  public static func jumpTarget(of record: StoredEntry) throws -> UInt64? {
    switch record.kind {
    case .restore, .undo, .redo:
      do {
        return try record.codec.decode(JumpTargetPayload.self, from: record.payload).target
      } catch {
        throw LogError.codec(codec: record.codec, typeName: record.typeName, underlying: error)
      }
    case .action, .marker:
      return nil
    }
  }

  /// Follows a restore, undo or redo entry's target, and the targets of jumps it leads to,
  /// to the entry whose state it makes current; `nil` for an action or a marker.
  ///
  /// Each step reads one entry. Targets always precede the entry naming them, so the walk ends.
  ///
  /// - Throws: ``LogError/codec(codec:typeName:underlying:)`` if a jump's payload is not a
  ///   target, or a storage error.
  public func resolveJump(_ record: StoredEntry) throws -> JumpResolution? {
    guard let target = try Self.jumpTarget(of: record) else { return nil }
    var chain = [target]
    var current = target
    var previous = record.seq
    while current > 0 {
      guard current < previous, let next = try self.record(at: current) else {
        return JumpResolution(target: target, state: current, chain: chain, stateTypeName: nil, isComplete: false)
      }
      guard let nextTarget = try Self.jumpTarget(of: next) else {
        return JumpResolution(
          target: target, state: current, chain: chain, stateTypeName: next.typeName, isComplete: true)
      }
      previous = current
      current = nextTarget
      chain.append(current)
    }
    return JumpResolution(target: target, state: 0, chain: chain, stateTypeName: nil, isComplete: true)
  }
}

// MARK: - Checking a jump before it is appended

extension ActionLog {
  /// Refuses a restore, undo or redo entry that would be appended at `seq` unless its payload is a
  /// target (`{"target": seq}` in its codec) before `seq` (docs/log-format.md §3): the engine
  /// refuses to open a log holding any other, so such an entry is never written.
  static func checkJump(_ entry: NewEntry, seq: UInt64) throws(LogError) {
    switch entry.kind {
    case .restore, .undo, .redo: break
    case .action, .marker: return
    }
    let target: UInt64
    do {
      target = try entry.codec.decode(JumpTargetPayload.self, from: entry.payload).target
    } catch {
      throw .invalidEntry(reason: "the \(entry.kind) entry at \(seq) has no {\"target\": seq} payload: \(error)")
    }
    guard target < seq else {
      throw .invalidEntry(reason: "the \(entry.kind) entry at \(seq) names target \(target), which is not before it")
    }
  }
}
