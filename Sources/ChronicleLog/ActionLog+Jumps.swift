// MARK: - Jumps: restore, undo, redo

/// Where a restore, undo or redo entry leads, in terms of the original entries.
///
/// A jump entry's payload names a target: the entry whose resulting state becomes
/// current. The target may itself be a jump (undoing an undo, restoring to a redo), whose
/// state is in turn its own target's. ``ActionLog/resolveJump(_:)`` follows that chain to
/// the entry that produced the state: an action or a marker, or 0 for the initial state.
///
/// ```swift
/// if let jump = try log.resolveJump(record) {
///   print("\(record.kind) → state after \(jump.state) (\(jump.stateTypeName ?? "initial state"))")
/// }
/// ```
public struct JumpResolution: Sendable, Hashable {
  /// The target the jump entry names itself.
  public var target: UInt64
  /// The entry whose resulting state the jump makes current (an action or marker), or 0
  /// for the initial state. When ``isComplete`` is `false`, the last entry the chain reached.
  public var state: UInt64
  /// The entries followed, from ``target`` to ``state``: more than one when jumps target jumps.
  public var chain: [UInt64]
  /// The type name of the entry at ``state``; `nil` for the initial state or an entry the log no longer holds.
  public var stateTypeName: String?
  /// `false` when the chain leads to an entry the log no longer holds (compacted away, or
  /// a damaged target): ``state`` is then as far as it could be followed.
  public var isComplete: Bool

  /// Creates a resolution.
  public init(target: UInt64, state: UInt64, chain: [UInt64], stateTypeName: String?, isComplete: Bool) {
    self.target = target
    self.state = state
    self.chain = chain
    self.stateTypeName = stateTypeName
    self.isComplete = isComplete
  }

  /// `state after 2074 (deposit)`, `initial state`, or `state after 12 (no longer in the log)`.
  public var summary: String {
    if state == 0 && isComplete { return "initial state" }
    return "state after \(state) (\(stateTypeName ?? "no longer in the log"))"
  }
}

extension ActionLog {
  /// The target a restore, undo or redo entry names (`{"target": seq}` in its codec), or
  /// `nil` for another kind.
  ///
  /// - Throws: ``LogError/codec(codec:typeName:underlying:)`` if the payload is not a target.
  public static func jumpTarget(of record: LogRecord) throws -> UInt64? {
    switch record.kind {
    case .restore, .undo, .redo:
      do {
        return try record.codec.decode(JumpPayload.self, from: record.payload).target
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
  public func resolveJump(_ record: LogRecord) throws -> JumpResolution? {
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

/// The payload of restore, undo and redo entries (see `docs/log-format.md`).
private struct JumpPayload: Decodable {
  var target: UInt64
}
