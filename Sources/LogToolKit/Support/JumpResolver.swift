#if LogTool
import ChronicleLog

/// Resolves restore, undo and redo entries to the states they return to, remembering each
/// answer (a listing meets the same jump in both of its passes) and the answer of every jump met
/// on the way, so a chain of jumps to jumps is followed once, in whatever order it is listed.
package struct JumpResolver {
  /// The entries of a resolution's ``JumpResolution/chain`` kept: a chain of 50,000 undo entries
  /// would otherwise be printed 50,000 times over. ``JumpResolution/state`` is always exact.
  package static let chainLimit = 64

  let log: ActionLog
  private var cache: [UInt64: JumpResolution?] = [:]

  package init(_ log: ActionLog) { self.log = log }

  /// The resolution for `record`, or `nil` for an action, a marker, or a jump whose payload (or
  /// the payload of a jump it leads to) is not a target (shown as stored).
  package mutating func resolve(_ record: StoredEntry) -> JumpResolution? {
    switch record.kind {
    case .action, .marker: return nil
    case .restore, .undo, .redo: break
    }
    if let known = cache[record.seq] { return known }
    let resolution = (try? ActionLog.jumpTarget(of: record)).flatMap { follow($0, from: record.seq) }
    cache[record.seq] = resolution
    return resolution
  }

  /// Follows the jump at `seq` to `target` as ``ActionLog/resolveJump(_:)`` does, stopping at the
  /// first jump whose resolution is known, and remembers the resolution of every jump on the way.
  private mutating func follow(_ target: UInt64, from seq: UInt64) -> JumpResolution? {
    // The entries followed: `target`, its target when it is a jump, and so on.
    var path = [target]
    var previous = seq
    var end: (state: UInt64, type: String?, complete: Bool, rest: [UInt64])
    while true {
      let current = path[path.count - 1]
      if current == 0 {
        end = (0, nil, true, [])
        break
      }
      if let known = cache[current] {
        guard let known else { return nil }
        end = (known.state, known.stateTypeName, known.isComplete, known.chain)
        break
      }
      guard current < previous, let next = try? log.record(at: current) else {
        end = (current, nil, false, [])
        break
      }
      let nextTarget: UInt64?
      do { nextTarget = try ActionLog.jumpTarget(of: next) } catch { return nil }
      guard let nextTarget else {
        end = (current, next.typeName, true, [])
        break
      }
      previous = current
      path.append(nextTarget)
    }
    func resolution(from index: Int) -> JumpResolution {
      var chain = Array(path[index...].prefix(Self.chainLimit))
      if chain.count < Self.chainLimit { chain += end.rest.prefix(Self.chainLimit - chain.count) }
      return JumpResolution(
        target: path[index], state: end.state, chain: chain, stateTypeName: end.type, isComplete: end.complete)
    }
    // Every jump on the way (all but the last entry followed, which ended the walk) resolves to the same state.
    for index in 1..<path.count where cache[path[index - 1]] == nil {
      cache[path[index - 1]] = resolution(from: index)
    }
    return resolution(from: 0)
  }
}
#endif  // LogTool
