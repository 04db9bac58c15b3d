import Chronicle

extension TestStore where State: Equatable {
  /// Replays the log from the initial state, with no snapshot, and fails the
  /// test at the first entry whose replayed state differs from the state the
  /// store had when that entry was committed.
  ///
  /// Recovery, time travel and undo all fold the reducer over the log again, so
  /// a reducer must be deterministic. One that reads the clock, a random number
  /// or any state outside its arguments is caught here:
  ///
  /// ```swift
  /// await store.send(.roll) { $0.lastRoll = 4 }
  /// store.assertReplayMatches()   // fails at the entry of .roll if the reducer rolled a die itself
  /// ```
  ///
  /// Entries committed before the test store opened (an existing directory
  /// log) are replayed too; the state the store recovered for them is checked.
  ///
  /// - Parameters:
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  public func assertReplayMatches(
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) {
    let site = SourceSite(fileID: fileID, filePath: filePath, line: line, column: column)
    let commits = recorder.commits
    let opened = self.opened
    var mismatch: (seq: UInt64, live: State, replayed: State, action: String?)?
    do throws(ChronicleError) {
      try store.replayStates { seq, replayed in
        if let commit = commits[seq] {
          guard commit.new == replayed else {
            mismatch = (seq, commit.new, replayed, commit.action.map(describe))
            return false
          }
        } else if seq == opened.seq, opened.state != replayed {
          mismatch = (seq, opened.state, replayed, nil)
          return false
        }
        return true
      }
    } catch {
      site.fail("The log could not be replayed: \(error)")
      return
    }
    guard let mismatch else { return }
    let entry = "entry \(mismatch.seq)\(mismatch.action.map { " (\($0))" } ?? "")"
    let live =
      commits[mismatch.seq] == nil ? "the state the store recovered" : "the state the store had when it committed it"
    site.fail(
      """
      Replaying the log from the initial state does not reproduce \(entry): the replayed state differs from \
      \(live). Is the reducer deterministic? It must not read the clock, random numbers or other outside \
      state; pass such values in the action. (\u{2212} live, + replayed)

      \(difference(mismatch.live, mismatch.replayed))
      """)
  }
}
