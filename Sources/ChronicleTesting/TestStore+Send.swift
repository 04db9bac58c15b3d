import Chronicle

extension TestStore where State: Equatable {
  /// Sends an action and asserts how it changes the state.
  ///
  /// The closure gets a copy of the state before the action and must turn it
  /// into the state expected after it; the test fails, with a diff, if the
  /// actual state differs. Without a closure, the state must not change.
  ///
  /// ```swift
  /// await store.send(.increment) { $0.count = 1 }
  /// await store.send(.noop)                       // asserts nothing changed
  /// ```
  ///
  /// The test also fails if a validator rejects the action (the failure names
  /// the validator's reason; use ``send(_:rejectedWith:isolation:fileID:filePath:line:column:)``
  /// when the rejection is the point), or if, in exhaustive mode, actions sent
  /// back by effects are still waiting to be received.
  ///
  /// - Parameters:
  ///   - action: the action to send.
  ///   - updateStateToExpectedResult: turns the state before the action into the expected one.
  ///   - isolation: the caller's actor; leave the default.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  /// - Returns: the entry's sequence number, or `nil` if the action was not committed.
  @discardableResult
  public func send(
    _ action: Action,
    isolation: isolated (any Actor)? = #isolation,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async -> UInt64? {
    let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
    prepareToSend(action, at: site)
    let seq: UInt64
    do {
      seq = try await store.send(action)
    } catch {
      if case ChronicleError.rejected(let reason) = error {
        site.fail("Sending \(describe(action)) was rejected: \(reason)")
      } else {
        site.fail("Sending \(describe(action)) failed: \(error)")
      }
      return nil
    }
    guard let commit = await delivered(seq, at: site) else { return seq }
    assertChange(
      from: commit.old, to: commit.new, expected: updateStateToExpectedResult, after: "sending \(describe(action))",
      at: site)
    return seq
  }
}

extension TestStore {
  /// Sends an action that a validator must reject, with this reason.
  ///
  /// ```swift
  /// await store.send(.withdraw("jenny", cents: 9_000), rejectedWith: "no account may go below zero")
  /// ```
  ///
  /// The test fails if the action is accepted (it is then committed like any
  /// other), or rejected for another reason. A rejected action changes nothing
  /// and is not logged.
  ///
  /// - Parameters:
  ///   - action: the action to send.
  ///   - reason: the reason of the validator expected to refuse it.
  ///   - isolation: the caller's actor; leave the default.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  public func send(
    _ action: Action,
    rejectedWith reason: String,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async {
    let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
    prepareToSend(action, at: site)
    do {
      let seq = try await store.send(action)
      site.fail(
        "Expected \(describe(action)) to be rejected with \"\(reason)\", but it was accepted as entry \(seq).")
      _ = await delivered(seq, at: site)
    } catch {
      let expectation = "Expected \(describe(action)) to be rejected with \"\(reason)\""
      switch error {
      case ChronicleError.rejected(let actual) where actual == reason:
        return
      case ChronicleError.rejected(let actual):
        site.fail("\(expectation), but it was rejected with \"\(actual)\".")
      default:
        site.fail("\(expectation), but sending it failed: \(error)")
      }
    }
  }

  // MARK: - Shared by send and receive

  /// Reports effect errors and, in exhaustive mode, actions not received before a new send.
  func prepareToSend(_ action: Action, at site: SourceSite) {
    prepare(for: "sending \(describe(action))", at: site)
  }

  /// Reports effect errors and, in exhaustive mode, actions not received before `what` (a send or a jump).
  func prepare(for what: String, at site: SourceSite) {
    reportEffectErrors(at: site)
    let skipped = recorder.takePending()
    guard exhaustivity == .on, !skipped.isEmpty else { return }
    site.fail(
      """
      \(counted(skipped.count, "action")) sent back by effects must be received before \(what):

      \(indented(skipped.compactMap(\.action).map(describe).joined(separator: "\n")))
      """)
  }

  /// Waits until the commit of entry `seq` reached the test store (another
  /// thread may be delivering it) and returns it.
  func delivered(_ seq: UInt64, at site: SourceSite) async -> Commit<State, Action>? {
    let deadline = ContinuousClock.now + .seconds(10)
    while true {
      if let commit = recorder.commit(seq) { return commit }
      if ContinuousClock.now >= deadline {
        site.fail("Entry \(seq) was committed but never delivered to the TestStore's commit observer.")
        return nil
      }
      await pause()
    }
  }

  /// Reports the errors effects threw since the last check.
  func reportEffectErrors(at site: SourceSite) {
    for error in recorder.takeEffectErrors() {
      site.fail("An effect failed: \(error)")
    }
  }

  /// Reports, and forgets, the actions sent back by effects that were never received.
  func reportUnreceivedActions(at site: SourceSite, when moment: String) {
    let unreceived = recorder.takePending()
    guard !unreceived.isEmpty else { return }
    site.fail(
      """
      \(counted(unreceived.count, "action")) sent back by effects \(unreceived.count == 1 ? "was" : "were") \
      not received \(moment):

      \(indented(unreceived.compactMap(\.action).map(describe).joined(separator: "\n")))
      """)
  }

  /// Reports effects still running.
  func reportRunningEffects(at site: SourceSite, when moment: String) {
    let running = store.runningEffects
    guard running > 0 else { return }
    site.fail(
      """
      \(counted(running, "effect")) \(running == 1 ? "was" : "were") still running \(moment). \
      Receive the actions \(running == 1 ? "it sends" : "they send"), cancel \(running == 1 ? "it" : "them"), \
      or give finish() a longer timeout.
      """)
  }

  /// Lets other tasks run a little while the test store waits.
  func pause() async {
    do {
      try await Task.sleep(for: .milliseconds(1))
    } catch {
      await Task.yield()
    }
  }
}

extension TestStore where State: Equatable {
  /// Compares the actual change `old` → `new` with the one the test expects.
  func assertChange(
    from old: State, to new: State, expected: ((inout State) throws -> Void)?, after what: String,
    at site: SourceSite
  ) {
    var expectedState: State
    switch exhaustivity {
    case .on:
      expectedState = old
    case .off:
      guard expected != nil else { return }
      expectedState = new
    }
    do {
      try expected?(&expectedState)
    } catch {
      site.fail("The assertion closure of \(what) threw: \(error)")
      return
    }
    if expectedState == new {
      if exhaustivity == .on, expected != nil, new == old {
        site.fail(
          """
          Expected the state to change after \(what), but it did not (the assertion closure \
          makes no change). Leave the closure out when no change is expected.
          """)
      }
      return
    }
    let header =
      expected == nil
      ? "The state changed after \(what), but no change was asserted: (\u{2212} expected, + actual)"
      : "The state after \(what) is not the expected one: (\u{2212} expected, + actual)"
    site.fail("\(header)\n\n\(difference(expectedState, new))")
  }
}
