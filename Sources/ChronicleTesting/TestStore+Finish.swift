import Chronicle

extension TestStore {
  /// Waits for the effects to finish, then fails the test (in exhaustive mode)
  /// if actions they sent back were not received or effects still run.
  ///
  /// ```swift
  /// await store.send(.fetch) { $0.isLoading = true }
  /// await store.receive(.loaded(42)) { $0.isLoading = false; $0.count = 42 }
  /// await store.finish()
  /// ```
  ///
  /// Call it at the end of a test; releasing a test store makes the same
  /// checks without waiting. Effect errors are reported here too.
  ///
  /// - Parameters:
  ///   - timeout: how long to wait for running effects; ``timeout`` (1 second) by default.
  ///   - isolation: the caller's actor; leave the default.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  public func finish(
    timeout: Duration? = nil,
    isolation: isolated (any Actor)? = #isolation,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async {
    let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let limit = timeout ?? self.timeout
    let deadline = ContinuousClock.now + limit
    while !isSettled, ContinuousClock.now < deadline { await pause() }
    reportEffectErrors(at: site)
    guard exhaustivity == .on else { return }
    reportUnreceivedActions(at: site, when: "at finish()")
    if store.runningEffects > 0 {
      reportRunningEffects(at: site, when: "after waiting \(limit) at finish()")
      settings.withLock { $0.reportedRunningEffects = true }
    }
  }

  /// Waits until no effect runs and every committed entry reached the test store.
  ///
  /// It fails nothing: in exhaustive mode the actions effects sent back must
  /// still be received. With ``Exhaustivity/off`` it is the way to let effects
  /// finish before checking the state:
  ///
  /// ```swift
  /// store.exhaustivity = .off
  /// await store.send(.fetch)
  /// await store.waitForEffects()
  /// #expect(store.state.count == 42)
  /// ```
  ///
  /// - Parameter isolation: the caller's actor; leave the default.
  public func waitForEffects(isolation: isolated (any Actor)? = #isolation) async {
    while true {
      await store.waitForEffects()
      while recorder.lastSeq < store.lastSeq, store.runningEffects == 0 { await pause() }
      if isSettled { return }
    }
  }

  /// Whether no effect runs and the test store saw every committed entry.
  var isSettled: Bool {
    store.runningEffects == 0 && recorder.lastSeq >= store.lastSeq
  }
}
