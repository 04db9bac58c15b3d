import Chronicle

extension TestStore where State: Equatable, Action: Equatable {
  /// Asserts that the oldest action sent back by an effect (or middleware) and
  /// not received yet is `expected`, and how it changed the state.
  ///
  /// Effects run for real: their actions are committed as soon as they are
  /// sent, and the test store keeps them, in log order, until received. If none
  /// is there yet, `receive` waits up to `timeout`.
  ///
  /// ```swift
  /// await store.send(.fetch) { $0.isLoading = true }
  /// await store.receive(.loaded(42)) {
  ///   $0.isLoading = false
  ///   $0.count = 42
  /// }
  /// ```
  ///
  /// In non-exhaustive mode, older actions that are not `expected` are skipped.
  ///
  /// - Parameters:
  ///   - expected: the action the effect must have sent.
  ///   - timeout: how long to wait for it; ``TestStore/timeout`` (1 second) by default.
  ///   - updateStateToExpectedResult: turns the state before the action into the expected one.
  ///   - isolation: the caller's actor; leave the default.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  public func receive(
    _ expected: Action,
    timeout: Duration? = nil,
    isolation: isolated (any Actor)? = #isolation,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async {
    await receiveNext(
      describe(expected), matching: { $0 == expected },
      mismatch: { actual in
        """
        Received another action than expected: (\u{2212} expected, + received)

        \(difference(expected, actual))
        """
      },
      timeout: timeout, assert: updateStateToExpectedResult, isolation: isolation,
      at: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }
}

extension TestStore where State: Equatable {
  /// Asserts that the oldest action sent back by an effect and not received yet
  /// satisfies `matches`, and how it changed the state.
  ///
  /// For actions whose payload the test cannot predict exactly, or that are not `Equatable`:
  ///
  /// ```swift
  /// await store.receive(where: { if case .loaded = $0 { true } else { false } }) {
  ///   $0.isLoading = false
  ///   $0.count = 42
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - matches: whether an action is the one expected.
  ///   - timeout: how long to wait for it; ``TestStore/timeout`` (1 second) by default.
  ///   - updateStateToExpectedResult: turns the state before the action into the expected one.
  ///   - isolation: the caller's actor; leave the default.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  public func receive(
    where matches: (Action) -> Bool,
    timeout: Duration? = nil,
    isolation: isolated (any Actor)? = #isolation,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async {
    await receiveNext(
      "an action matching the predicate", matching: matches,
      mismatch: { actual in "Received \(describe(actual)), which does not match the predicate." },
      timeout: timeout, assert: updateStateToExpectedResult, isolation: isolation,
      at: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Takes the next matching received action, waiting up to the timeout, and checks its change.
  private func receiveNext(
    _ description: String, matching matches: (Action) -> Bool, mismatch: (Action) -> String,
    timeout: Duration?, assert expected: ((inout State) throws -> Void)?, isolation: isolated (any Actor)?,
    at site: SourceSite
  ) async {
    let limit = timeout ?? self.timeout
    let deadline = ContinuousClock.now + limit
    defer { reportEffectErrors(at: site) }
    while true {
      switch exhaustivity {
      case .on:
        if let commit = recorder.takeFirstPending(), let action = commit.action {
          guard matches(action) else {
            site.fail(mismatch(action))
            return
          }
          assertChange(
            from: commit.old, to: commit.new, expected: expected, after: "receiving \(describe(action))", at: site)
          return
        }
      case .off:
        if let found = recorder.takeFirstPending(where: matches), let action = found.match.action {
          let commit = found.match
          assertChange(
            from: commit.old, to: commit.new, expected: expected, after: "receiving \(describe(action))", at: site)
          return
        }
      }
      if ContinuousClock.now >= deadline { break }
      await pause()
    }
    let others = recorder.pendingActions
    let running = "\(counted(store.runningEffects, "effect")) still running"
    if others.isEmpty {
      site.fail("Expected to receive \(description) within \(limit), but no action was sent back (\(running)).")
    } else {
      site.fail(
        """
        Expected to receive \(description) within \(limit), but only other actions were sent back \
        (\(running)):

        \(indented(others.map(describe).joined(separator: "\n")))
        """)
    }
  }
}
