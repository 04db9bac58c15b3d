import Chronicle
import Synchronization

/// A store for tests that asserts every state change and every action
/// effects send back, exhaustively by default.
///
/// It wraps a real ``/Chronicle/Store``: actions go through the reducer, the
/// validators and the log exactly as in the app, and effects really run. The
/// test store watches the commits and checks them against what the test says.
///
/// ```swift
/// @Test func fetch() async {
///   let store = TestStore(initialState: Counter.State(), reducer: Counter())
///   await store.send(.fetch) { $0.isLoading = true }
///   await store.receive(.loaded(42)) {
///     $0.isLoading = false
///     $0.count = 42
///   }
///   await store.finish()
///   store.assertReplayMatches()
/// }
/// ```
///
/// The test fails (through XCTest or Swift Testing, whichever runs it) when:
/// - the state after an action is not the one the assertion closure describes
///   (a diff shows the difference);
/// - an action is rejected by a validator and the test did not expect it;
/// - an effect sends back another action than the one `receive` expects, or
///   none within the timeout;
/// - actions sent back by effects are left unreceived, or effects still run,
///   at ``finish(timeout:isolation:fileID:filePath:line:column:)`` or when the
///   test store is released;
/// - an effect throws (unless ``/Chronicle/StoreOptions/onEffectError`` is set);
/// - replaying the log does not reproduce the states the store went through
///   (``assertReplayMatches(fileID:filePath:line:column:)``).
///
/// Set ``exhaustivity`` to ``Exhaustivity/off`` for integration tests that
/// only check what they care about. Releasing the test store closes its store
/// (running effects are cancelled).
public final class TestStore<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  /// The real store the test drives: read its ``/Chronicle/Store/history``,
  /// time-travel it, or close it to reopen the log.
  public let store: Store<State, Action>

  let recorder: CommitRecorder<State, Action>
  let subscription: Subscription
  let settings: Mutex<Settings>
  /// The last entry and the state when the test store opened (a directory log may hold earlier entries).
  let opened: (seq: UInt64, state: State)
  /// Where the test store was created: failures found when it is released point here.
  let site: SourceSite

  struct Settings {
    var exhaustivity = Exhaustivity.on
    var timeout = Duration.seconds(1)
    /// Whether `finish()` already reported effects still running, so that releasing does not repeat it.
    var reportedRunningEffects = false
  }

  // MARK: - Creating

  /// Creates a test store over a private in-memory log.
  ///
  /// ```swift
  /// let store = TestStore(initialState: Counter.State(), reducer: Counter())
  /// ```
  ///
  /// - Parameters:
  ///   - initialState: the state before the first action.
  ///   - reducer: the reducer under test.
  ///   - validators: rules every new state must satisfy, as in the app.
  ///   - middleware: middleware to run after every committed action, as in the app.
  ///   - fileID: the file where failures found when the test store is released
  ///     are reported; the caller's by default.
  ///   - filePath: the full path of that file; the caller's by default.
  ///   - line: the line where those failures are reported; the caller's by default.
  ///   - column: the column where those failures are reported; the caller's by default.
  ///
  /// The in-memory log lives in a temporary directory; if that cannot be
  /// created (no writable temporary directory) the process stops with the reason.
  public convenience init<R: Reducer>(
    initialState: State, reducer: R, validators: [Validator<State>] = [],
    middleware: [any Middleware<State, Action>] = [], fileID: StaticString = #fileID,
    filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
  ) where R.State == State, R.Action == Action {
    let recorder = CommitRecorder<State, Action>()
    let store: Store<State, Action>
    do {
      store = try Store(
        initialState: initialState, reducer: reducer, log: .inMemory,
        options: Self.options(StoreOptions(), reportingTo: recorder), validators: validators, middleware: middleware)
    } catch {
      fatalError("ChronicleTesting: the in-memory log of a TestStore could not be created: \(error)")
    }
    self.init(
      store: store, recorder: recorder,
      site: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// Creates a test store over a log of your choice, to test against a real
  /// directory log, other durability or snapshot settings, or an existing log.
  ///
  /// ```swift
  /// let store = try TestStore(
  ///   initialState: Ledger.State(), reducer: Ledger(), log: .directory(url),
  ///   options: StoreOptions(durability: .full, snapshotEvery: 10),
  ///   validators: [Ledger.noOverdraft])
  /// ```
  ///
  /// An existing log is recovered first; the test then starts from its state.
  /// The other parameters are those of
  /// ``init(initialState:reducer:validators:middleware:fileID:filePath:line:column:)``.
  /// Unless `options` has its own ``/Chronicle/StoreOptions/onEffectError``,
  /// errors thrown by effects become test failures.
  ///
  /// - Throws: the ``/Chronicle/ChronicleError`` opening the log failed with
  ///   (``/Chronicle/ChronicleError/logLocked(path:)`` when another writer has it).
  public convenience init<R: Reducer>(
    initialState: State, reducer: R, log: LogLocation, options: StoreOptions = StoreOptions(),
    validators: [Validator<State>] = [], middleware: [any Middleware<State, Action>] = [],
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
    column: UInt = #column
  ) throws where R.State == State, R.Action == Action {
    let recorder = CommitRecorder<State, Action>()
    let store = try Store(
      initialState: initialState, reducer: reducer, log: log, options: Self.options(options, reportingTo: recorder),
      validators: validators, middleware: middleware)
    self.init(
      store: store, recorder: recorder,
      site: SourceSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  private init(store: Store<State, Action>, recorder: CommitRecorder<State, Action>, site: SourceSite) {
    self.store = store
    self.recorder = recorder
    self.settings = Mutex(Settings())
    self.site = site
    // Nothing was sent yet, so nothing can be committed between these lines.
    self.opened = (store.lastSeq, store.state)
    recorder.start(after: store.lastSeq)
    self.subscription = store.observeCommits { [recorder] commit in recorder.record(commit) }
  }

  /// `options`, with effect errors sent to `recorder` unless the test handles them itself.
  private static func options(_ options: StoreOptions, reportingTo recorder: CommitRecorder<State, Action>)
    -> StoreOptions
  {
    var options = options
    if options.onEffectError == nil {
      options.onEffectError = { [recorder] error in recorder.recordEffectError(error) }
    }
    return options
  }

  deinit {
    subscription.cancel()
    if exhaustivity == .on {
      reportEffectErrors(at: site)
      reportUnreceivedActions(at: site, when: "when the TestStore was released")
      if !settings.withLock(\.reportedRunningEffects) {
        reportRunningEffects(at: site, when: "when the TestStore was released")
      }
    }
    do {
      try store.close()
    } catch {
      site.fail("Closing the store of the TestStore failed: \(error)")
    }
  }

  // MARK: - Settings and reading

  /// Whether every state change and every action sent back must be asserted.
  /// ``Exhaustivity/on`` by default.
  public var exhaustivity: Exhaustivity {
    get { settings.withLock(\.exhaustivity) }
    set { settings.withLock { $0.exhaustivity = newValue } }
  }

  /// How long `receive` and `finish` wait when not told otherwise: 1 second by default.
  public var timeout: Duration {
    get { settings.withLock(\.timeout) }
    set { settings.withLock { $0.timeout = newValue } }
  }

  /// The store's current state.
  public var state: State { store.state }

  /// The actions sent back by effects (and middleware) that were not received yet, oldest first.
  public var unreceivedActions: [Action] { recorder.pendingActions }
}
