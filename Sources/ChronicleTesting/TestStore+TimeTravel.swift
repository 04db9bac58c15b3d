import Chronicle

extension TestStore where State: Equatable {
  /// Undoes the newest undo step and asserts how it changes the state, as ``send(_:isolation:assert:fileID:filePath:line:column:)``
  /// does for an action.
  ///
  /// ```swift
  /// await store.send(.increment) { $0.count = 1 }
  /// await store.undo { $0.count = 0 }
  /// await store.redo { $0.count = 1 }
  /// await store.restore(to: 0) { $0.count = 0 }
  /// ```
  ///
  /// The test fails if there is nothing to undo, if a validator refuses the state the undo
  /// would make current, or if the state after it is not the one the closure describes.
  ///
  /// - Parameters:
  ///   - metadata: audit data stored with the undo entry, merged over the store's
  ///     ``/Chronicle/Store/defaultMetadata``.
  ///   - isolation: the caller's actor; leave the default.
  ///   - updateStateToExpectedResult: turns the state before the undo into the expected one.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  /// - Returns: the undo entry's sequence number, or `nil` if nothing was committed.
  @discardableResult
  public func undo(
    metadata: [String: String] = [:],
    isolation: isolated (any Actor)? = #isolation,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async -> UInt64? {
    await jump(
      "undoing", expected: updateStateToExpectedResult,
      at: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column), isolation: isolation
    ) { try store.undo(metadata: metadata) }
  }

  /// Redoes the newest undone step and asserts how it changes the state, as
  /// ``undo(metadata:isolation:assert:fileID:filePath:line:column:)`` does.
  ///
  /// The test fails if there is nothing to redo, if a validator refuses the state, or if the
  /// state after it is not the one the closure describes.
  ///
  /// - Parameters:
  ///   - metadata: audit data stored with the redo entry, merged over the store's
  ///     ``/Chronicle/Store/defaultMetadata``.
  ///   - isolation: the caller's actor; leave the default.
  ///   - updateStateToExpectedResult: turns the state before the redo into the expected one.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  /// - Returns: the redo entry's sequence number, or `nil` if nothing was committed.
  @discardableResult
  public func redo(
    metadata: [String: String] = [:],
    isolation: isolated (any Actor)? = #isolation,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async -> UInt64? {
    await jump(
      "redoing", expected: updateStateToExpectedResult,
      at: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column), isolation: isolation
    ) { try store.redo(metadata: metadata) }
  }

  /// Makes the state after entry `seq` current and asserts how it changes the state, as
  /// ``undo(metadata:isolation:assert:fileID:filePath:line:column:)`` does.
  ///
  /// The test fails if `seq` is past the end or before a compacted log's cut, if a validator
  /// refuses the state, or if the state after it is not the one the closure describes.
  ///
  /// - Parameters:
  ///   - seq: the entry whose state becomes current (0: the initial state).
  ///   - metadata: audit data stored with the restore entry, merged over the store's
  ///     ``/Chronicle/Store/defaultMetadata``.
  ///   - isolation: the caller's actor; leave the default.
  ///   - updateStateToExpectedResult: turns the state before the restore into the expected one.
  ///   - fileID: the file where a failure is reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where a failure is reported; the caller's by default.
  ///   - column: the column where a failure is reported; the caller's by default.
  /// - Returns: the restore entry's sequence number, or `nil` if nothing was committed.
  @discardableResult
  public func restore(
    to seq: UInt64,
    metadata: [String: String] = [:],
    isolation: isolated (any Actor)? = #isolation,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) async -> UInt64? {
    await jump(
      "restoring entry \(seq)", expected: updateStateToExpectedResult,
      at: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column), isolation: isolation
    ) { try store.restore(to: seq, metadata: metadata) }
  }

  /// Appends a jump with `body` and asserts the change it made, as a send does.
  private func jump(
    _ what: String, expected: ((inout State) throws -> Void)?, at site: SourceSite,
    isolation: isolated (any Actor)?, _ body: () throws -> UInt64
  ) async -> UInt64? {
    prepare(for: what, at: site)
    let seq: UInt64
    do {
      seq = try body()
    } catch {
      site.fail("\(what.prefix(1).uppercased())\(what.dropFirst()) failed: \(error)")
      return nil
    }
    guard let commit = await delivered(seq, at: site) else { return seq }
    assertChange(from: commit.old, to: commit.new, expected: expected, after: what, at: site)
    return seq
  }
}
