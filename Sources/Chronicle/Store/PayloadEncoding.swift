import ChronicleLog

/// The payloads of a large batch's actions, encoded on a second thread (``SharedGroups``) while the
/// calling thread reduces and validates the actions. The actions are `Sendable`, so their `Encodable`
/// conformance may run on either thread.
// @unchecked Sendable: the slots of `payloads` and `failures` are written only by the thread that runs
// their group (each group once), and read by the calling thread only after `SharedGroups.finish()`
// returned, when every group has run; both buffers are freed in `deinit`, after that. `payloadsTaken`
// is the calling thread's only.
@usableFromInline
final class PayloadEncoding<Action: Encodable & Sendable>: @unchecked Sendable {
  @usableFromInline let actions: [Action]
  /// Each action's payload (empty until encoded).
  @usableFromInline let payloads: UnsafeMutablePointer<[UInt8]>
  /// Each group's first failure, as the action's index and the error.
  @usableFromInline let failures: UnsafeMutablePointer<(index: Int, error: any Error)?>
  @usableFromInline let groups: SharedGroups
  /// Whether the caller moved the payloads out (``takePayloads()``): they are no longer this object's.
  @usableFromInline var payloadsTaken = false

  /// Starts encoding `actions` on a second thread; `nil` when they are few or the machine has one
  /// core (the caller encodes each action in turn then).
  @inlinable
  static func start(_ actions: some Collection<Action>, codec: PayloadCodec) -> PayloadEncoding? {
    SharedGroups.start(items: actions.count).map { PayloadEncoding(Array(actions), codec: codec, groups: $0) }
  }

  @inlinable
  init(_ actions: [Action], codec: PayloadCodec, groups: SharedGroups) {
    self.actions = actions
    self.groups = groups
    payloads = .allocate(capacity: actions.count)
    payloads.initialize(repeating: [], count: actions.count)
    let groupCount = SharedGroups.groups(of: actions.count)
    failures = .allocate(capacity: groupCount)
    failures.initialize(repeating: nil, count: groupCount)
    groups.publish(groups: groupCount) { [actions, payloads, failures] group in
      for index in SharedGroups.items(of: group, among: actions.count) {
        do { payloads[index] = try codec.encode(actions[index]) } catch {
          failures[group] = (index, error)
          return
        }
      }
    }
  }

  deinit {
    // The helper may still be encoding (the batch failed first): it must be done with the buffers.
    groups.finish()
    if !payloadsTaken { payloads.deinitialize(count: actions.count) }
    payloads.deallocate()
    failures.deinitialize(count: SharedGroups.groups(of: actions.count))
    failures.deallocate()
  }

  /// Waits until every group has run, and fails for the first of the first `count` actions that
  /// does not encode.
  ///
  /// - Throws: ``ChronicleError/unencodable(type:underlying:)`` for that action.
  @inlinable
  func checkEncoded(first count: Int) throws(ChronicleError) {
    groups.finish()
    for group in 0..<SharedGroups.groups(of: count) {
      if let (index, error) = failures[group], index < count {
        throw .unencodable(type: "\(Action.self)", underlying: error)
      }
    }
  }

  /// Every action's payload, once every group has run, for the caller to move out of its slot
  /// (`move()`, each once): the payloads change hands without a retain and a release each.
  ///
  /// - Throws: what ``checkEncoded(first:)`` throws; the payloads stay this object's then.
  @inlinable
  func takePayloads() throws(ChronicleError) -> UnsafeMutableBufferPointer<[UInt8]> {
    try checkEncoded(first: actions.count)
    payloadsTaken = true
    return UnsafeMutableBufferPointer(start: payloads, count: actions.count)
  }
}
